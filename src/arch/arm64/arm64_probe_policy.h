#pragma once
// Which decoded A64 instructions no probe may go on, whatever the engine: the checker
// (arm64_check.h) and the trap engine's execution plan (probe_support/execution_plan.h) both
// refuse through this one function. Sequences (a probe between a load-exclusive and its
// store-exclusive) need the function's bytes and are the checker's.
//
// Policy decisions (never_probe_reason() has the user-facing wording):
//   * SVC is never probed: out of line, the kernel would record the slot as the thread's
//     return address (syscall restart rewinds to pc - 4, signal frames, clone children).
//   * Reads of EL0 system registers (MRS NZCV, DAIF, FPCR, TPIDR_EL0, CNTVCT_EL0, ...) and of
//     the ID registers Linux emulates at EL0 (op1 = 0, CRn = 0: MIDR_EL1, ID_AA64*) are fine;
//     other EL1+ reads trap, and out of line the fault would name the slot, so they are
//     refused; writes are refused when they target EL1+ registers (op1 != 3), DAIF or
//     privileged PSTATE fields; MSR NZCV/FPCR/FPSR/TPIDR_EL0 are fine; anything touching the
//     debug registers (op0 = 2) is refused either way.
//   * CONSTRAINED UNPREDICTABLE forms that binutils also rejects (e.g. LDAR with should-be-one
//     fields clear, MOPS with overlapping registers, LDP into one register) are unallocated.
#include <optional>
#include <string>
#include <string_view>

#include "insn/arm64/arm64_insn.h"

namespace xprobe::arch::arm64 {

// nullopt when a probe may go on the instruction; otherwise the reason, for the user.
std::optional<std::string> probe_refusal(const insn::arm64::Arm64Insn& insn);

// Why an instruction the decoder classified NeverProbe for `reason` may never be probed, one
// phrase for the user.
std::string_view never_probe_reason(insn::arm64::NeverReason reason);

}  // namespace xprobe::arch::arm64
