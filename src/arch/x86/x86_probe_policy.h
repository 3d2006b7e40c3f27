#pragma once
// Which decoded x86 instructions a user-space probe engine must not put a probe on.
#include <optional>
#include <string>

#include "insn/x86/x86_insn.h"

namespace xprobe::arch::x86 {

// nullopt when the instruction can be probed (the breakpoint engine can execute it out of
// line, relocated, or simulate it); otherwise the reason, for the user.
std::optional<std::string> probe_refusal(const insn::x86::X86Insn& insn);

}  // namespace xprobe::arch::x86
