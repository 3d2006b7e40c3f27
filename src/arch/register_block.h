#pragma once
// The register block ptrace hands a tracer, in the tracer's own (host) layout: x86-64's
// user_regs_struct, or on an arm64 host glibc's user_regs_struct, which is the kernel's
// user_pt_regs (x0..x30, sp, pc, pstate; read with PTRACE_GETREGSET NT_PRSTATUS). A 64-bit x86
// tracer sees a 32-bit tracee's registers in the 64-bit block too (32-bit values in 64-bit
// fields). Everything above arch/ reaches into the block through these functions only.
#include <signal.h>
#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>

#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::arch {

#if defined(__x86_64__) || defined(__aarch64__)
using RegisterBlock = user_regs_struct;
#else
#error "xprobe runs on x86-64 and arm64 hosts only"
#endif

#if defined(__x86_64__)
inline uint64_t block_ip(const RegisterBlock& block) { return block.rip; }
inline void set_block_ip(RegisterBlock& block, uint64_t value) { block.rip = value; }
inline uint64_t block_sp(const RegisterBlock& block) { return block.rsp; }
// Where Go's register ABI keeps the running goroutine's g.
inline uint64_t block_goroutine(const RegisterBlock& block) { return block.r14; }
// The trap engine's breakpoint, hlt, faults in user mode (#GP): SIGSEGV, si_code SI_KERNEL, the
// instruction pointer on the hlt itself (arch/x86/probe_support/breakpoint.h says why not int3).
inline constexpr int kBreakpointSignal = SIGSEGV;
inline constexpr int kBreakpointSiCode = SI_KERNEL;
#elif defined(__aarch64__)
inline uint64_t block_ip(const RegisterBlock& block) { return block.pc; }
inline void set_block_ip(RegisterBlock& block, uint64_t value) { block.pc = value; }
inline uint64_t block_sp(const RegisterBlock& block) { return block.sp; }
inline uint64_t block_goroutine(const RegisterBlock& block) { return block.regs[28]; }
// BRK stops with SIGTRAP, si_code TRAP_BRKPT, the pc at the BRK itself.
inline constexpr int kBreakpointSignal = SIGTRAP;
inline constexpr int kBreakpointSiCode = TRAP_BRKPT;
#endif

// The block of a stopped thread, read and written through ptrace.
Status read_register_block(pid_t tid, RegisterBlock& block);
Status write_register_block(pid_t tid, const RegisterBlock& block);

// The architecture of the code a stopped thread runs, from its block (x86: the code segment
// selector tells 64-bit from compatibility-mode code; arm64: AArch64, since the 64-bit block
// is what an AArch64 thread has).
insn::Arch thread_arch(const RegisterBlock& block);

// Register `id` (its index in `code`'s own ptrace block, see register_abi.h) as the host's
// block holds it; 0 for a register the host's block does not have.
uint64_t register_word(const RegisterBlock& block, insn::Arch code, unsigned id);

}  // namespace xprobe::arch
