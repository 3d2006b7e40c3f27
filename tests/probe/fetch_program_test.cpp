#include "probe/fetch_program.h"

#include <gtest/gtest.h>

#include "probe/definition_parser.h"

namespace xprobe::probe {
namespace {

std::string compiled(std::string_view definition, insn::Arch arch = insn::Arch::X86_64) {
  auto parsed = parse_definition(definition, ParseOptions{arch});
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().render());
  if (!parsed.ok()) return {};
  const ProbeFetchPlan plan = compile_fetch_plan(parsed.value(), arch);
  std::string out;
  for (const FetchProgram& program : plan.arguments) out += program.disassemble(probe_abi(arch)) + "--\n";
  return out;
}

TEST(FetchProgramCompile, RegistersAndDefaultType) {
  EXPECT_EQ(compiled("p foo %di"), "load_reg di\nstore_raw x64\n--\n");
  EXPECT_EQ(compiled("p foo %ax", insn::Arch::I386), "load_reg ax\nstore_raw x32\n--\n");
}

TEST(FetchProgramCompile, LastDereferenceIsTheStoresRead) {
  EXPECT_EQ(compiled("p foo +8(+0(%di)):u32"), "load_reg di\nderef +0\nadd +8\nstore_mem u32\n--\n");
  EXPECT_EQ(compiled("p foo -16(%sp):s16"), "load_reg sp\nadd -16\nstore_mem s16\n--\n");
  EXPECT_EQ(compiled("p foo +0(%si):string"), "load_reg si\nadd +0\nstore_string string\n--\n");
  EXPECT_EQ(compiled("p foo +u4(+8(%di)):x8[3]"), "load_reg di\nderef +8\nadd +4\nstore_mem x8[3]\n--\n");
}

TEST(FetchProgramCompile, AbiArgumentMapping) {
  // System V: rdi rsi rdx rcx r8 r9, then the stack above the return address.
  EXPECT_EQ(compiled("p foo $arg1 $arg4 $arg6 $arg7 $arg8"),
            "load_reg di\nstore_raw x64\n--\nload_reg cx\nstore_raw x64\n--\nload_reg r9\nstore_raw x64\n--\n"
            "load_stack 1\nstore_raw x64\n--\nload_stack 2\nstore_raw x64\n--\n");
  // cdecl: all on the stack, slot 0 is the return address.
  EXPECT_EQ(compiled("p foo a1 a3", insn::Arch::I386), "load_stack 1\nstore_raw x32\n--\nload_stack 3\nstore_raw x32\n--\n");
  // AAPCS64: x0..x7, then the stack at sp.
  EXPECT_EQ(compiled("p foo a1 a8 a9", insn::Arch::AArch64),
            "load_reg x0\nstore_raw x64\n--\nload_reg x7\nstore_raw x64\n--\nload_stack 0\nstore_raw x64\n--\n");
}

TEST(FetchProgramCompile, ReturnProbeForms) {
  EXPECT_EQ(compiled("r foo $retval rp a2"),
            "load_reg ax\nstore_raw x64\n--\nload_retaddr\nstore_raw x64\n--\nload_saved_arg 2\nstore_raw x64\n--\n");
  EXPECT_EQ(compiled("r foo rv", insn::Arch::AArch64), "load_reg x0\nstore_raw x64\n--\n");
  // At entry the return address is at [sp] on x86 and in x30 on AArch64.
  EXPECT_EQ(compiled("p foo rp"), "load_stack 0\nstore_raw x64\n--\n");
  EXPECT_EQ(compiled("p foo rp", insn::Arch::AArch64), "load_reg x30\nstore_raw x64\n--\n");
}

TEST(FetchProgramCompile, EntryCapturesForReturnProbes) {
  auto parsed = parse_definition("r foo a2 $arg2 $arg7 $retval");
  ASSERT_TRUE(parsed.ok());
  const ProbeFetchPlan plan = compile_fetch_plan(parsed.value(), insn::Arch::X86_64);
  ASSERT_EQ(plan.entry_captures.size(), 2u);
  EXPECT_EQ(plan.entry_captures[0].first, 2u);
  EXPECT_EQ(plan.entry_captures[0].second.disassemble(probe_abi(insn::Arch::X86_64)), "load_reg si\nstore_raw x64\n");
  EXPECT_EQ(plan.entry_captures[1].first, 7u);
  EXPECT_EQ(plan.entry_captures[1].second.disassemble(probe_abi(insn::Arch::X86_64)), "load_stack 1\nstore_raw x64\n");
}

TEST(FetchProgramCompile, ImmediatesCommAndStack) {
  EXPECT_EQ(compiled("p foo \\0x7b $comm \\\"hi\" $stack $stack2 \\4096:string"),
            "load_imm 0x7b\nstore_raw x64\n--\nstore_comm\n--\nstore_imm_string \"hi\"\n--\n"
            "load_reg sp\nstore_raw x64\n--\nload_stack 2\nstore_raw x64\n--\nload_imm 0x1000\nstore_string string\n--\n");
}

TEST(FetchProgramCompile, RelocationsForSymbolsAndFileOffsets) {
  auto parsed = parse_definition("p /bin/app:0x10 @counter+8:s32 @+0x2000:u8 @0x601040");
  ASSERT_TRUE(parsed.ok());
  ProbeFetchPlan plan = compile_fetch_plan(parsed.value(), insn::Arch::X86_64);
  const ArchProbeAbi& abi = probe_abi(insn::Arch::X86_64);
  EXPECT_EQ(plan.arguments[0].disassemble(abi), "load_sym counter\nadd +8\nadd +0\nstore_mem s32\n");
  ASSERT_EQ(plan.arguments[0].relocations.size(), 1u);
  EXPECT_EQ(plan.arguments[0].relocations[0].symbol, "counter");
  EXPECT_EQ(plan.arguments[0].relocations[0].binary, "/bin/app");
  EXPECT_FALSE(plan.arguments[0].resolved());
  plan.arguments[0].relocations[0].address = 0x1000;
  EXPECT_TRUE(plan.arguments[0].resolved());
  EXPECT_EQ(plan.arguments[1].disassemble(abi), "load_file_offset 0x2000\nadd +0\nstore_mem u8\n");
  EXPECT_EQ(plan.arguments[1].relocations[0].kind, Relocation::Kind::FileOffset);
  EXPECT_EQ(plan.arguments[2].disassemble(abi), "load_imm 0x601040\nadd +0\nstore_mem x64\n");
  EXPECT_TRUE(plan.arguments[2].resolved());
}

TEST(FetchProgramCompile, StackBatchingHint) {
  auto parsed = parse_definition("p foo $stack3 s1 $arg8 %ax");
  ASSERT_TRUE(parsed.ok());
  // $arg8 is stack slot 1 + (8 - 1 - 6) = 2; $stack3 reads words 0..3.
  EXPECT_EQ(compile_fetch_plan(parsed.value(), insn::Arch::X86_64).stack_words_read, 4u);
}

}  // namespace
}  // namespace xprobe::probe
