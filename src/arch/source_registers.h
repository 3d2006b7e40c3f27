#pragma once
// Register names and operands as other tools write them, translated to what the kernel's
// fetch arguments use (pt_regs names, see register_abi.h):
//   - DWARF register numbers (each psABI's DWARF mapping), for variable locations and CFI;
//   - the operands of .note.stapsdt markers, in the assembler syntax of the object's
//     architecture, with the width the spelling reads.
#include <optional>
#include <string>
#include <string_view>

#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::arch {

// The kernel's name (without '%') of DWARF register `number`, or nullopt when the register is
// not one a fetch argument can read (vector, x87, segment registers).
std::optional<std::string_view> dwarf_register_name(insn::Arch arch, unsigned number);

// One SDT operand (the part after "SIZE@") as a fetch argument ("%di", "-16(%bp)", "\\5");
// an operand a fetch argument cannot express is an error that says why.
Result<std::string> sdt_operand_fetcharg(insn::Arch arch, std::string_view operand);

}  // namespace xprobe::arch
