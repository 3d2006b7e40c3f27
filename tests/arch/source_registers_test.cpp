// The translation of DWARF register numbers and USDT operands into fetch arguments. The
// expected names are the psABIs' DWARF mappings and the kernel's pt_regs fetcharg names
// (Documentation/trace/uprobetracer.rst); the operand spellings are what GCC's <sys/sdt.h>
// writes into .note.stapsdt on each architecture.
#include "arch/source_registers.h"

#include <gtest/gtest.h>

namespace xprobe::arch {
namespace {

std::string fetcharg_or_error(insn::Arch arch, std::string_view operand) {
  auto result = sdt_operand_fetcharg(arch, operand);
  return result ? *result : "error: " + result.error().message;
}

TEST(SourceRegisters, DwarfNumbersFollowEachPsAbi) {
  EXPECT_EQ(dwarf_register_name(insn::Arch::X86_64, 5), "di");   // x86-64: 5 is rdi
  EXPECT_EQ(dwarf_register_name(insn::Arch::X86_64, 1), "dx");   // and 1 rdx, not rcx
  EXPECT_EQ(dwarf_register_name(insn::Arch::X86_64, 16), "ip");  // the return address column
  EXPECT_EQ(dwarf_register_name(insn::Arch::X86_64, 17), std::nullopt);  // xmm0
  EXPECT_EQ(dwarf_register_name(insn::Arch::I386, 5), "bp");     // i386: 5 is ebp
  EXPECT_EQ(dwarf_register_name(insn::Arch::I386, 1), "cx");
  EXPECT_EQ(dwarf_register_name(insn::Arch::AArch64, 30), "x30");
  EXPECT_EQ(dwarf_register_name(insn::Arch::AArch64, 31), "sp");
  EXPECT_EQ(dwarf_register_name(insn::Arch::AArch64, 64), std::nullopt);  // v0
}

TEST(SourceRegisters, X86AttOperandsBecomeFetchArguments) {
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "%edi"), "%di");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "%r12d"), "%r12");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "%sil"), "%si");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "$-7"), "\\-7");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "-16(%rbp)"), "-16(%bp)");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "(%rax)"), "+0(%ax)");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::I386, "8(%esp)"), "+8(%sp)");
}

TEST(SourceRegisters, X86OperandsFetchArgumentsCannotExpressSayWhy) {
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "(%rax,%rdx,8)"),
            "error: an index register ((base,index,scale)), which fetch arguments cannot express");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "counter(%rip)"),
            "error: a %rip-relative operand (a global), which needs the symbol's address");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "%xmm0"), "error: unknown register '%xmm0'");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::X86_64, "$x"), "error: an immediate that is not a number");
}

TEST(SourceRegisters, Arm64OperandsBecomeFetchArguments) {
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "x1"), "%x1");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "w3"), "%x3");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "[sp, 16]"), "+16(%sp)");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "[x29, #-8]"), "-8(%x29)");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "[x0]"), "+0(%x0)");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "5"), "\\5");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "x31"), "error: unknown register 'x31'");
  EXPECT_EQ(fetcharg_or_error(insn::Arch::AArch64, "[x0, 8"), "error: an unclosed '['");
}

}  // namespace
}  // namespace xprobe::arch
