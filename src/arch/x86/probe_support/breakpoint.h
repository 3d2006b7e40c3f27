#pragma once
// The x86 breakpoint of the trap engine: hlt (F4), not int3 (CC).
//
// In user mode hlt raises #GP, a fault: the thread stops with SIGSEGV (si_code SI_KERNEL) and
// its instruction pointer on the hlt, as AArch64's BRK leaves it. int3 is a trap: its stop has
// the instruction pointer one byte past it, inside the probed instruction. That matters when
// xprobe dies (SIGKILL) while a thread sits in a hit's stop: the kernel drops the stop's signal
// and lets the thread go with the registers it has. Past an int3 it runs the tail of the probed
// instruction as an instruction of its own (`49 01 c4`, add %rax,%r12, run from its second byte
// is `01 c4`, add %eax,%esp: a wrecked stack pointer). On the hlt it executes the hlt again and
// dies of SIGSEGV, as a thread that meets a breakpoint nobody serves does. Both cost the same per
// hit (one exception and one signal-delivery-stop; measured side by side under ptrace: 16.5 µs
// each here). A hlt the program runs itself reaches the tracer the same way and is delivered
// back to it; a probe never displaces one (a privileged instruction is refused).
#include <cstdint>

namespace xprobe::arch::x86 {

inline constexpr uint8_t kBreakpointByte = 0xf4;  // hlt

}  // namespace xprobe::arch::x86
