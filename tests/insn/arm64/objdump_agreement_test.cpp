// The decoder against binutils: every instruction objdump prints in real arm64 objects gets
// the class the test derives from its mnemonic, and every word objdump cannot decode (.inst,
// udf) is refused.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

#include "insn/arm64/arm64_insn.h"
#include "insn/arm64/arm64_summary.h"
#include "objdump_classes.h"

namespace xprobe::insn::arm64 {
namespace {

struct Agreement {
  size_t compared = 0;
  size_t mismatches = 0;
  size_t targets_compared = 0;  // branch and literal targets checked against objdump's
  std::map<std::string, size_t> per_class;
};

Agreement compare_file(const std::string& path) {
  Agreement result;
  const auto lines = test::disassemble_with_objdump(path);
  for (const auto& line : lines) {
    const std::array<uint8_t, 4> bytes = {static_cast<uint8_t>(line.word), static_cast<uint8_t>(line.word >> 8),
                                          static_cast<uint8_t>(line.word >> 16),
                                          static_cast<uint8_t>(line.word >> 24)};
    const auto summary = summarize(bytes, line.address);
    const std::string ours = summary ? summary->kind : "unallocated";
    const std::string expected = test::expected_class(line.mnemonic, line.operands);
    ++result.compared;
    ++result.per_class[expected];
    if (ours != expected) {
      if (++result.mismatches <= 40) {
        ADD_FAILURE() << path << " " << std::hex << line.address << ": " << std::hex << line.word << " "
                      << line.mnemonic << " " << line.operands << " -> ours " << ours << ", objdump's " << expected;
      }
      continue;
    }
    // Targets agree with the address objdump prints for branches and literals.
    if (summary && summary->target && !line.operands.empty()) {
      const std::string last = line.operands.find('<') != std::string::npos
                                   ? line.operands.substr(0, line.operands.find('<') - 1)
                                   : line.operands;
      const auto comma = last.rfind(',');
      const std::string address_text = comma == std::string::npos ? last : last.substr(comma + 1);
      const auto start = address_text.find_first_not_of(' ');
      if (start != std::string::npos && address_text[start] != '#' &&
          address_text.find_first_not_of("0123456789abcdef ") == std::string::npos) {
        ++result.targets_compared;
        EXPECT_EQ(*summary->target, std::stoull(address_text.substr(start), nullptr, 16))
            << std::hex << line.address << " " << line.mnemonic << " " << line.operands;
      }
    }
  }
  std::printf("%s: %zu instructions compared, %zu mismatches, %zu targets compared\n", path.c_str(),
              result.compared, result.mismatches, result.targets_compared);
  for (const auto& [cls, count] : result.per_class) std::printf("  %-14s %zu\n", cls.c_str(), count);
  return result;
}

TEST(Arm64ObjdumpAgreement, DebianArm64Libc) {
  const auto result = compare_file("/usr/aarch64-linux-gnu/lib/libc.so.6");
  EXPECT_GT(result.compared, 200000u);
  EXPECT_GT(result.targets_compared, 50000u);
  EXPECT_EQ(result.mismatches, 0u);
}

TEST(Arm64ObjdumpAgreement, DebianArm64Libstdcxx) {
  const auto result = compare_file("/usr/aarch64-linux-gnu/lib/libstdc++.so.6");
  EXPECT_GT(result.compared, 100000u);
  EXPECT_EQ(result.mismatches, 0u);
}

class CorpusObject : public ::testing::TestWithParam<const char*> {};

TEST_P(CorpusObject, AgreesWithObjdump) {
  const auto result = compare_file(std::string(XPROBE_ARM64_CORPUS_DIR) + "/" + GetParam());
  EXPECT_GT(result.compared, 10u);
  EXPECT_EQ(result.mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(BuiltWithCrossGcc, CorpusObject,
                         ::testing::Values("exclusives.o", "branch_protection_standard.o",
                                           "branch_protection_v83.o", "literals_and_branches.o",
                                           "system_and_hints.o", "unallocated.o"));

// Every word of the unallocated corpus is one objdump cannot decode, and xprobe refuses it.
TEST(Arm64ObjdumpAgreement, UnallocatedCorpusIsRefusedByBoth) {
  const auto lines = test::disassemble_with_objdump(std::string(XPROBE_ARM64_CORPUS_DIR) + "/unallocated.o");
  ASSERT_GT(lines.size(), 40u);
  for (const auto& line : lines) {
    EXPECT_EQ(test::expected_class(line.mnemonic, line.operands), "unallocated")
        << std::hex << line.word << " objdump: " << line.mnemonic << " " << line.operands;
    EXPECT_EQ(decode(line.word, line.address).cls, InsnClass::Unallocated) << std::hex << line.word;
  }
}

}  // namespace
}  // namespace xprobe::insn::arm64
