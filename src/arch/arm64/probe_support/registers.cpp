#include "arch/arm64/probe_support/registers.h"

namespace xprobe::arch::arm64 {

sim::arm64::Registers to_sim(const UserPtRegs& regs) {
  sim::arm64::Registers out;
  out.x = regs.regs;
  out.sp = regs.sp;
  out.pc = regs.pc;
  out.nzcv = static_cast<uint32_t>(regs.pstate & kPstateNzcvMask);
  return out;
}

UserPtRegs from_sim(const sim::arm64::Registers& simulated, const UserPtRegs& regs) {
  UserPtRegs out = regs;
  out.regs = simulated.x;
  out.sp = simulated.sp;
  out.pc = simulated.pc;
  out.pstate = (regs.pstate & ~(kPstateNzcvMask | kPstateBtypeMask)) | (simulated.nzcv & kPstateNzcvMask);
  return out;
}

}  // namespace xprobe::arch::arm64
