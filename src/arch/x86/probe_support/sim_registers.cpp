#include "arch/x86/probe_support/sim_registers.h"

#include <fmt/format.h>

namespace xprobe::arch::x86 {

using namespace sim::x86;

Result<ArgumentLocation> argument_location(unsigned n) {
  static constexpr Gpr kArgumentRegisters[] = {kRdi, kRsi, kRdx, kRcx, kR8, kR9};
  if (n == 0) return make_error("arguments are numbered from 1");
  if (n <= 6) return ArgumentLocation{true, kArgumentRegisters[n - 1], 0};
  return ArgumentLocation{false, kRsp, 8 * uint64_t{n - 6}};
}

int i386_register_word(unsigned id) {
  // Word indexes of the 64-bit block: r15 0, r14 1, r13 2, r12 3, rbp 4, rbx 5, r11 6, r10 7,
  // r9 8, r8 9, rax 10, rcx 11, rdx 12, rsi 13, rdi 14, orig_rax 15, rip 16, cs 17, eflags 18,
  // rsp 19, ss 20, fs_base 21, gs_base 22, ds 23, es 24, fs 25, gs 26.
  static constexpr int kWords[] = {5, 11, 12, 13, 14, 4, 10, 23, 24, 25, 26, 15, 16, 17, 18, 19, 20};
  if (id >= sizeof kWords / sizeof kWords[0]) return -1;
  return kWords[id];
}

X86Regs to_sim(const user_regs_struct& raw) {
  X86Regs regs;
  uint64_t values[16] = {raw.rax, raw.rcx, raw.rdx, raw.rbx, raw.rsp, raw.rbp, raw.rsi, raw.rdi,
                         raw.r8,  raw.r9,  raw.r10, raw.r11, raw.r12, raw.r13, raw.r14, raw.r15};
  for (int i = 0; i < 16; ++i) regs.gpr[i] = values[i];
  regs.rip = raw.rip;
  regs.rflags = raw.eflags;
  regs.fs_base = raw.fs_base;
  regs.gs_base = raw.gs_base;
  return regs;
}

void from_sim(const X86Regs& regs, user_regs_struct& raw) {
  unsigned long long* fields[16] = {&raw.rax, &raw.rcx, &raw.rdx, &raw.rbx, &raw.rsp, &raw.rbp, &raw.rsi, &raw.rdi,
                                    &raw.r8,  &raw.r9,  &raw.r10, &raw.r11, &raw.r12, &raw.r13, &raw.r14, &raw.r15};
  for (int i = 0; i < 16; ++i) *fields[i] = regs.gpr[i];
  raw.rip = regs.rip;
  raw.eflags = regs.rflags;
}

}  // namespace xprobe::arch::x86
