#pragma once
// The AArch64 software breakpoint of the trap engine: BRK #0, the debugger's breakpoint (gdb
// plants the same word). The stop reports the pc of the BRK itself, as x86's hlt does: the
// exception returns to the instruction that raised it.
//
// The kernel's own uprobes use BRK #5 (UPROBES_BRK_IMM), which its breakpoint hook claims
// first: a word of ours with that immediate would go through the kernel's uprobe lookup on
// every hit and be taken for one of its probes. BRK #0 reaches the tracer as a plain SIGTRAP
// (TRAP_BRKPT). In a BTI-guarded page a BRK traps as a breakpoint whatever PSTATE.BTYPE
// holds (the Arm ARM: it is compatible with every BTYPE), so a breakpoint on a landing pad
// reached by BR/BLR stops like any other.
#include <cstdint>

namespace xprobe::arch::arm64 {

inline constexpr uint32_t kBreakpointWord = 0xd4200000;  // BRK #0
inline constexpr uint8_t kBreakpointBytes[4] = {0x00, 0x00, 0x20, 0xd4};
inline constexpr uint64_t kInstructionSize = 4;

}  // namespace xprobe::arch::arm64
