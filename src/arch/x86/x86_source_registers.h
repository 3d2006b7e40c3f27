#pragma once
// x86's DWARF register numbers and AT&T operand spellings (of .note.stapsdt markers) in the
// kernel's fetch-argument names; arch/source_registers.h is the interface.
#include <optional>
#include <string>
#include <string_view>

#include "support/result.h"

namespace xprobe::arch::x86 {

std::optional<std::string_view> dwarf_register_name(unsigned number, bool is_64bit);
// AT&T: "%edi", "$5", "-16(%rbp)"; "(%rax,%rdx,8)" and "%rip"-relative globals are refused.
Result<std::string> sdt_operand_fetcharg(std::string_view operand);

}  // namespace xprobe::arch::x86
