#pragma once
// An AArch64 thread's general registers in the layout of the kernel's struct user_pt_regs
// (what PTRACE_GETREGSET with NT_PRSTATUS reads on an arm64 host: x0..x30, sp, pc, pstate),
// spelled out here so that the conversion to the simulator's registers is a pure function
// that builds and is tested on any host.
#include <array>
#include <cstdint>

#include "sim/arm64/registers.h"

namespace xprobe::arch::arm64 {

struct UserPtRegs {
  std::array<uint64_t, 31> regs{};
  uint64_t sp = 0;
  uint64_t pc = 0;
  uint64_t pstate = 0;

  bool operator==(const UserPtRegs&) const = default;
};
static_assert(sizeof(UserPtRegs) == 34 * 8, "the kernel's user_pt_regs is 34 words");

// PSTATE fields in the SPSR layout ptrace shows: the condition flags and BTYPE (FEAT_BTI).
inline constexpr uint64_t kPstateNzcvMask = 0xf0000000;
inline constexpr uint64_t kPstateBtypeMask = 0x00000c00;
// PSTATE.nRW (M[4]): set for a thread in AArch32 state (a compat process).
inline constexpr uint64_t kPstateAarch32 = 0x10;

// The general registers and flags as the simulator takes them (the V registers are not in
// this block: they stay zero, and no instruction the trap engine simulates reads them).
sim::arm64::Registers to_sim(const UserPtRegs& regs);

// `regs` after the simulated instruction: x0..x30, sp, pc and NZCV from `simulated`. BTYPE
// is cleared, as any instruction that is not a branch leaves it; a simulated BR/BLR does not
// set it either, so its target is not checked for a landing pad (lenient: the program never
// faults where it would not have, as with the kernel's own simulated branches).
UserPtRegs from_sim(const sim::arm64::Registers& simulated, const UserPtRegs& regs);

}  // namespace xprobe::arch::arm64
