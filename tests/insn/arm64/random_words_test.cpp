// Random 32-bit words against binutils: assembled as .inst, disassembled by objdump, and
// compared with the decoder. Where both decode a word they agree on its class; every word
// objdump rejects is refused by xprobe; the words objdump decodes but xprobe refuses are only
// the documented CONSTRAINED UNPREDICTABLE / UNDEFINED forms.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "insn/arm64/arm64_insn.h"
#include "objdump_classes.h"

namespace xprobe::insn::arm64 {
namespace {

constexpr size_t kWords = 100000;

// Refused on purpose although binutils 2.40 decodes them (see arm64_summary.h): ordered
// loads/stores whose should-be-one fields are not ones, load pairs into one register or into
// their written-back base, FMLAL/FMLSL with sz = 1.
const std::set<std::string> kRefusedOnPurpose = {
    "stlr", "stlrb", "stlrh", "stllr", "stllrb", "stllrh", "ldlar", "ldlarb", "ldlarh", "ldar", "ldarb", "ldarh",
    "ldp",  "ldnp",  "ldpsw", "fmlal", "fmlal2", "fmlsl", "fmlsl2"};

// FEAT_SYSREG128/SYSINSTR128 (SYSP, MSRR, MRRS) postdate binutils 2.40, which prints them as
// .inst: the one encoding space where objdump cannot be the oracle.
bool is_128bit_system_space(uint32_t word) { return (word >> 22) == 0b1101010101; }

TEST(Arm64RandomWords, AgreeWithObjdump) {
  const std::string dir = ::testing::TempDir();
  const std::string source = dir + "/arm64_random_words.s", object = dir + "/arm64_random_words.o";
  {
    std::ofstream out(source);
    out << ".text\n";
    std::mt19937 random(20261201);
    char line[32];
    for (size_t i = 0; i < kWords; ++i) {
      std::snprintf(line, sizeof line, ".inst 0x%08x\n", static_cast<unsigned>(random()));
      out << line;
    }
  }
  ASSERT_EQ(std::system(("aarch64-linux-gnu-as " + source + " -o " + object).c_str()), 0);
  const auto lines = test::disassemble_with_objdump(object);
  ASSERT_EQ(lines.size(), kWords);

  size_t both_decode = 0, both_refuse = 0, refused_on_purpose = 0, scalable_refused = 0, newer_than_binutils = 0;
  size_t failures = 0;
  for (const auto& line : lines) {
    const auto insn = decode(line.word, line.address);
    const std::string ours(class_name(insn.cls));
    const std::string expected = test::expected_class(line.mnemonic, line.operands);
    auto fail = [&](const char* what) {
      if (++failures <= 30)
        ADD_FAILURE() << what << ": " << std::hex << line.word << " " << line.mnemonic << " " << line.operands
                      << " -> ours " << ours << ", objdump's " << expected;
    };
    if (expected == "unallocated") {
      if (insn.cls == InsnClass::Unallocated) {
        ++both_refuse;
      } else if (insn.cls == InsnClass::Sve) {
        ++scalable_refused;  // the checker refuses the SVE/SME space as a whole
      } else if (is_128bit_system_space(line.word)) {
        ++newer_than_binutils;
      } else {
        fail("accepted a word objdump rejects");
      }
    } else if (insn.cls == InsnClass::Unallocated) {
      if (kRefusedOnPurpose.count(line.mnemonic) != 0) {
        ++refused_on_purpose;
      } else {
        fail("refused a word objdump decodes");
      }
    } else {
      ++both_decode;
      if (ours != expected) fail("class differs");
    }
  }
  std::printf("%zu random words: %zu decoded by both (same class), %zu refused by both, %zu SVE/SME refused, "
              "%zu refused on purpose, %zu in FEAT_D128 space, %zu failures\n",
              kWords, both_decode, both_refuse, scalable_refused, refused_on_purpose, newer_than_binutils, failures);
  EXPECT_EQ(failures, 0u);
}

}  // namespace
}  // namespace xprobe::insn::arm64
