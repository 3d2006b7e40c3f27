#pragma once
// Which decoded A64 instructions no probe may go on, whatever the engine: the checker
// (arm64_check.h) and the trap engine's execution plan (probe_support/execution_plan.h) both
// refuse through this one function. Sequences (a probe between a load-exclusive and its
// store-exclusive) need the function's bytes and are the checker's.
#include <optional>
#include <string>

#include "insn/arm64/arm64_insn.h"

namespace xprobe::arch::arm64 {

// nullopt when a probe may go on the instruction; otherwise the reason, for the user.
std::optional<std::string> probe_refusal(const insn::arm64::Arm64Insn& insn);

}  // namespace xprobe::arch::arm64
