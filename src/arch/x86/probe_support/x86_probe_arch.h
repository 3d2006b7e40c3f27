#pragma once
// The trap engine's ProbeArch for x86 code: x86-64 processes, and i386 processes under a
// 64-bit kernel (compatibility mode). Both break with int3 and take the paths of
// execution_plan.h. They differ in decoding mode, word size (the return address, pushes and
// pops), slot placement (32-bit code reaches only the low 4 GiB, but all of it) and which
// registers hold what (i386 cdecl: every argument on the stack, the return value in eax).
//
// A 64-bit tracer reads an i386 thread's registers in the 64-bit user_regs_struct: eax in
// rax, esp in rsp, eip in rip, and so on, zero-extended; r8-r15 do not exist for it.
#include <functional>
#include <memory>
#include <span>

#include "arch/probe_arch.h"
#include "insn/x86/decoder.h"

namespace xprobe::arch::x86 {

using DecodeFunction =
    std::function<insn::x86::DecodeStatus(std::span<const uint8_t>, uint64_t, insn::x86::X86Insn&)>;

// `decode` replaces the project's decoder (tests substitute an oracle); empty: insn::x86::decode
// in the mode of `arch` for the host's vendor.
std::unique_ptr<ProbeArch> make_probe_arch(insn::Arch arch, DecodeFunction decode = {});

// Code segment selectors of Linux user space on x86-64 (arch/x86/include/asm/segment.h:
// __USER_CS and __USER32_CS): which mode a thread's code runs in.
inline constexpr uint64_t kUser64CodeSegment = 0x33;
inline constexpr uint64_t kUser32CodeSegment = 0x23;

}  // namespace xprobe::arch::x86
