#include "arch/arm64/probe_support/emulation.h"

#include "sim/arm64/simulator.h"

namespace xprobe::arch::arm64 {

Result<UserPtRegs> emulate(const insn::arm64::Arm64Insn& insn, const UserPtRegs& regs, sim::arm64::MemoryReader& memory) {
  // Only the plain branches are simulated (execution_plan.h): no PAC option is ever needed.
  auto next = sim::arm64::simulate(insn, insn.address, to_sim(regs), memory);
  if (!next) return next.error();
  return from_sim(*next, regs);
}

}  // namespace xprobe::arch::arm64
