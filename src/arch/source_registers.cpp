#include "arch/source_registers.h"

#include "arch/arm64/arm64_source_registers.h"
#include "arch/x86/x86_source_registers.h"

namespace xprobe::arch {

std::optional<std::string_view> dwarf_register_name(insn::Arch arch, unsigned number) {
  switch (arch) {
    case insn::Arch::X86_64: return x86::dwarf_register_name(number, /*is_64bit=*/true);
    case insn::Arch::I386: return x86::dwarf_register_name(number, /*is_64bit=*/false);
    case insn::Arch::AArch64: return arm64::dwarf_register_name(number);
  }
  return std::nullopt;
}

Result<std::string> sdt_operand_fetcharg(insn::Arch arch, std::string_view operand) {
  switch (arch) {
    case insn::Arch::X86_64: return x86::sdt_operand_fetcharg(operand);
    case insn::Arch::I386: return x86::sdt_operand_fetcharg(operand);
    case insn::Arch::AArch64: return arm64::sdt_operand_fetcharg(operand);
  }
  return make_error("an architecture without SDT operand rules");
}

}  // namespace xprobe::arch
