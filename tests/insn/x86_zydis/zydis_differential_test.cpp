// Differential test against Zydis 4: random and mutated byte strings, in 64- and 32-bit
// mode, both vendors; validity and length must agree except for the narrow classes listed
// in x86_diff/expected_exceptions.cpp, where the manuals show xprobe is right.
#include <gtest/gtest.h>

#include "support/hex.h"
#include "x86_diff/differential_run.h"

namespace xprobe::test::x86 {
namespace {

using insn::x86::DecoderConfig;
using insn::x86::Mode;
using insn::x86::Vendor;

constexpr uint64_t kSeed = 20260101;
constexpr uint64_t kCasesPerMode = 400000;

void run_mode(Mode mode) {
  auto pool = load_libc_instructions(mode);
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  ASSERT_GT(pool->instructions.size(), 10000u) << "too few real instructions to mutate";
  RunSummary summary;
  run_differential(*pool, mode, kSeed, kCasesPerMode, summary);
  std::cout << summary.report(40);
  EXPECT_EQ(summary.cases, kCasesPerMode);
  EXPECT_EQ(summary.unexpected.total(), 0u) << summary.unexpected.report(40);
}

TEST(ZydisDifferential, AgreesOnRandomAndMutatedBytesIn64BitMode) { run_mode(Mode::Long64); }

TEST(ZydisDifferential, AgreesOnRandomAndMutatedBytesIn32BitMode) { run_mode(Mode::Protected32); }

// The real instructions themselves, all of them, in a linear sweep of libc's .text.
TEST(ZydisDifferential, AgreesOnEveryInstructionOfLibcText) {
  for (Mode mode : {Mode::Long64, Mode::Protected32}) {
    auto pool = load_libc_instructions(mode);
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    const ZydisOracle oracle(DecoderConfig{mode, Vendor::Intel});
    DisagreementTally tally;
    for (size_t i = 0; i < pool->instructions.size(); ++i) {
      const auto& entry = pool->instructions[i];
      const std::span<const uint8_t> rest(pool->bytes.data() + entry.offset, pool->bytes.size() - entry.offset);
      const Comparison comparison = compare_decoders(rest.first(std::min<size_t>(rest.size(), 15)), oracle.config(), oracle);
      if (!comparison.agrees() && find_expected_exception(comparison) == nullptr) tally.add(comparison, "libc");
    }
    EXPECT_EQ(tally.total(), 0u) << (mode == Mode::Long64 ? "64-bit" : "32-bit") << " libc:\n" << tally.report(40);
  }
}

// Every expected exception still describes a live disagreement (else it must be removed)
// and is matched by its own example.
TEST(ZydisDifferential, EveryExpectedExceptionStillDisagreesOnItsExample) {
  for (const ExpectedException& exception : expected_exceptions()) {
    auto bytes = parse_hex_bytes(exception.example_hex);
    ASSERT_TRUE(bytes.has_value()) << exception.name;
    const DecoderConfig config{exception.example_mode, exception.example_vendor};
    const ZydisOracle oracle(config);
    Comparison comparison = compare_decoders(*bytes, config, oracle);
    EXPECT_FALSE(comparison.agrees()) << exception.name << ": no longer a disagreement, remove it: "
                                      << describe_case(comparison);
    EXPECT_EQ(find_expected_exception(comparison), &exception) << exception.name << " does not match its example "
                                                               << describe_case(comparison);
  }
}

}  // namespace
}  // namespace xprobe::test::x86
