#pragma once
// Whether an AArch64 probe may become one `B` to a trampoline (the jump-optimized engine)
// instead of a BRK, and which instruction the B displaces.
//
// A64 instructions are one aligned word, and so is the B: exactly one instruction is
// displaced, and no branch, return or landing pad can arrive inside it, only on it, where
// it meets the B and goes to the trampoline — as a BRK there would trap. So, unlike x86, no
// branch needs redirecting, and the proofs x86 makes about the bytes after the first
// instruction are needed in one case only (the landing pad below). The places:
//   - a function's first instruction (entry probes);
//   - a return site: the instruction after a BL/BLR/BLRAA in the caller (return probes);
//     refused when it is a landing pad (a `bti j` after a setjmp-like call is reached by a
//     BR from longjmp, and a B is no valid BR target on a BTI-guarded page).
// The displaced instruction runs relocated in the trampoline (trampoline.h); what cannot be
// relocated keeps the breakpoint, with the reason.
//
// Landing pads at the entry (BTI C/J/JC, PACIASP, PACIBSP, which Debian's toolchain puts
// first in every function that may be called indirectly): on a BTI-guarded page an indirect
// call (BLR) must land on one, and a B there would raise a Branch Target exception (SIGILL)
// in the caller's thread. The landing pad therefore stays, and the B replaces the
// instruction after it (entry + 4): an indirect call meets the landing pad, then the B
// (a direct branch, which BTI never checks), and the trampoline's B back is direct too. The
// trampoline reports the hit as the entry's: pc = the entry, and x30 as it was before a
// PACIASP/PACIBSP signed it (XPACLRI on the saved copy; the signed value is restored).
// BTI and PAC signing change nothing else, so every other register is the entry's. That is
// right only if entry + 4 is reached from the entry alone, which is proven as x86 proves its
// displaced bytes: no branch of the function, its split-off parts or the fragments its jumps
// lead to targets entry + 4; no indirect jump in the function; no C++ landing pad or other
// symbol at entry + 4; every jump leaving the function lands on another function or a
// described fragment; and entry + 4 is no landing pad itself.
#include <cstdint>
#include <memory>

#include "arch/jump_arch.h"
#include "insn/arm64/arm64_insn.h"
#include "support/result.h"

namespace xprobe::arch::arm64 {

inline constexpr uint64_t kJumpPatchSize = 4;  // one B

struct Arm64JumpPatch {
  uint64_t address = 0;   // where the B goes (the displaced instruction's address)
  uint64_t reported_pc = 0;  // the pc the agent sees: the probe's address
  insn::arm64::Arm64Insn displaced;
  // A PACIASP/PACIBSP at reported_pc ran before the B: the agent gets x30 unsigned.
  bool strip_link_register = false;
};

// The plan, or why the place must stay a breakpoint.
Result<Arm64JumpPatch> plan_jump_patch(const JumpPatchFunction& function, uint64_t address, JumpPatchPlace place);

}  // namespace xprobe::arch::arm64
