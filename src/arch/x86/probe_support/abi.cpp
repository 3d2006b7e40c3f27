#include "arch/x86/probe_support/abi.h"

#include <fmt/format.h>

namespace xprobe::arch::x86 {

using namespace sim::x86;

Result<ArgumentLocation> argument_location(unsigned n) {
  static constexpr Gpr kArgumentRegisters[] = {kRdi, kRsi, kRdx, kRcx, kR8, kR9};
  if (n == 0) return make_error("arguments are numbered from 1");
  if (n <= 6) return ArgumentLocation{true, kArgumentRegisters[n - 1], 0};
  return ArgumentLocation{false, kRsp, 8 * uint64_t{n - 6}};
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
