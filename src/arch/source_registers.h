#pragma once
// Register names as other tools write them, translated to the names the kernel's fetch
// arguments use (pt_regs names: %di, %bp, %r12 on x86-64; %x0..%x30, %sp on AArch64):
//   - DWARF register numbers (the psABI's DWARF mapping), for variable locations and CFI;
//   - the assembler spellings of .note.stapsdt operands (%rdi, %edi, %dil, %x1, %w1), with
//     the width the spelling reads.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "insn/arch.h"

namespace xprobe::arch {

// The kernel's name (without '%') of DWARF register `number`, or nullopt when the register is
// not one a fetch argument can read (vector, x87, segment registers).
std::optional<std::string_view> dwarf_register_name(insn::Arch arch, unsigned number);

struct OperandRegister {
  std::string_view name;  // the kernel's name, without '%'
  unsigned bytes = 8;     // how much of it the spelling names (%edi: 4, %dil: 1)
};

// An SDT operand's register spelling ("rdi", "edi", "r12d", "w3"; without '%').
std::optional<OperandRegister> assembler_register(insn::Arch arch, std::string_view spelling);

}  // namespace xprobe::arch
