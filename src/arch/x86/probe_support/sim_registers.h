#pragma once
// System V x86-64 calling convention as the probe core needs it, plus the conversion between
// ptrace's register block and the simulator's register set.
#include <sys/user.h>

#include <cstdint>

#include "sim/x86/regs.h"
#include "support/result.h"

namespace xprobe::arch::x86 {

// Where $argN (1-based) is at function entry: rdi, rsi, rdx, rcx, r8, r9, then the stack
// at rsp + 8 * (N - 6) (slot 0 holds the return address).
struct ArgumentLocation {
  bool in_register = false;
  sim::x86::Gpr reg = sim::x86::kRdi;
  uint64_t stack_offset = 0;  // from rsp at entry
};
Result<ArgumentLocation> argument_location(unsigned n);

// The return value register and where the return address is at function entry.
inline constexpr sim::x86::Gpr kReturnValue = sim::x86::kRax;
inline constexpr uint64_t kReturnAddressStackOffset = 0;

// An i386 thread's register `id` (its index in the 32-bit struct user_regs_struct: ebx, ecx,
// edx, esi, edi, ebp, eax, ds, es, fs, gs, orig_eax, eip, cs, eflags, esp, ss) as a 64-bit
// tracer finds it: the index of the 64-bit user_regs_struct word that holds it (the kernel
// fills the 64-bit block of a compat task field by field, zero-extended). -1: no such register.
int i386_register_word(unsigned id);

sim::x86::X86Regs to_sim(const user_regs_struct& raw);
void from_sim(const sim::x86::X86Regs& regs, user_regs_struct& raw);

}  // namespace xprobe::arch::x86
