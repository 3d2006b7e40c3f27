#pragma once
// AArch64's DWARF register numbers and the assembler's operand spellings (of .note.stapsdt
// markers) in the kernel's fetch-argument names; arch/source_registers.h is the interface.
#include <optional>
#include <string>
#include <string_view>

#include "support/result.h"

namespace xprobe::arch::arm64 {

std::optional<std::string_view> dwarf_register_name(unsigned number);
// "x1", "w1", "[sp, 16]", "[x0]", "5".
Result<std::string> sdt_operand_fetcharg(std::string_view operand);

}  // namespace xprobe::arch::arm64
