// The libFuzzer target's invariants, replayed over random and mutated inputs so that the
// gcc CI (which has no libFuzzer) checks them on every run.
#include <gtest/gtest.h>

#include <random>

#include "x86_diff/decoder_invariants.h"
#include "x86_diff/differential_run.h"

namespace xprobe::test::x86 {
namespace {

using insn::x86::Mode;

TEST(DecoderInvariants, HoldOnMutatedRealInstructions) {
  for (Mode mode : {Mode::Long64, Mode::Protected32}) {
    auto pool = load_libc_instructions(mode);
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    CaseGenerator generator(*pool, mode, 7 + static_cast<uint64_t>(mode));
    uint64_t address = 0x7f0000001000;
    for (int n = 0; n < 40000; ++n) {
      const TestCase test_case = generator.next();
      address += 0x1357;  // varying addresses exercise the relative-target arithmetic
      const std::string problem = decode_and_check_all_configs(test_case.bytes(), address);
      ASSERT_TRUE(problem.empty()) << problem << " (" << mutation_name(test_case.mutation) << ")";
    }
  }
}

TEST(DecoderInvariants, HoldOnRandomBytesOfEveryLength) {
  std::mt19937_64 rng(99);
  std::vector<uint8_t> bytes;
  for (int n = 0; n < 40000; ++n) {
    bytes.resize(rng() % 18);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    // Addresses near the top of the 32- and 64-bit spaces make targets wrap around.
    const uint64_t address = (n % 3 == 0) ? 0xfffffffffffffff0ull : (n % 3 == 1) ? 0xfffffff0ull : rng();
    const std::string problem = decode_and_check_all_configs(bytes, address);
    ASSERT_TRUE(problem.empty()) << problem;
  }
}

TEST(DecoderInvariants, NeverReadPastAnEmptyInput) {
  for (Mode mode : {Mode::Long64, Mode::Protected32}) {
    insn::x86::X86Insn insn;
    EXPECT_EQ(insn::x86::decode({}, 0, {mode, insn::x86::Vendor::Intel}, insn), insn::x86::DecodeStatus::Truncated);
    EXPECT_EQ(insn.length, 0);
  }
}

}  // namespace
}  // namespace xprobe::test::x86
