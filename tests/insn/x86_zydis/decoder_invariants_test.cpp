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

namespace xprobe::test::x86 {
namespace {

// The checker itself: it accepts a correct result and notices each kind of corruption, so
// the replays above (and the fuzzer) cannot pass vacuously.
TEST(DecoderInvariants, CheckerNoticesCorruptedResults) {
  const std::vector<uint8_t> lea_rip = {0x48, 0x8d, 0x15, 0xdb, 0xff, 0xff, 0xff};  // lea rdx, [rip-0x25]
  const std::vector<uint8_t> call = {0xe8, 0x10, 0x00, 0x00, 0x00};                 // call .+0x15
  const insn::x86::DecoderConfig config{Mode::Long64, insn::x86::Vendor::Intel};
  insn::x86::X86Insn good;
  ASSERT_EQ(insn::x86::decode(lea_rip, 0x1000, config, good), insn::x86::DecodeStatus::Ok);
  ASSERT_EQ(check_decoder_invariants(lea_rip, 0x1000, config, insn::x86::DecodeStatus::Ok, good), "");
  auto broken = [&](auto corrupt) {
    insn::x86::X86Insn copy = good;
    corrupt(copy);
    return !check_decoder_invariants(lea_rip, 0x1000, config, insn::x86::DecodeStatus::Ok, copy).empty();
  };
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.length = 8; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.length = 6; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.disp_offset = 2; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.disp_size = 1; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.disp = 0x25; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.modrm_offset = 1; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.has_sib = true; }));
  EXPECT_TRUE(broken([](insn::x86::X86Insn& i) { i.imm_size = 1; i.imm_offset = 6; }));

  insn::x86::X86Insn branch;
  ASSERT_EQ(insn::x86::decode(call, 0x1000, config, branch), insn::x86::DecodeStatus::Ok);
  ASSERT_EQ(check_decoder_invariants(call, 0x1000, config, insn::x86::DecodeStatus::Ok, branch), "");
  EXPECT_EQ(branch.rel_target, 0x1015u);
  branch.rel_target = 0x1010;
  EXPECT_FALSE(check_decoder_invariants(call, 0x1000, config, insn::x86::DecodeStatus::Ok, branch).empty());
  branch.rel_target = 0x1015;
  branch.has_rel_target = false;
  EXPECT_FALSE(check_decoder_invariants(call, 0x1000, config, insn::x86::DecodeStatus::Ok, branch).empty());
}

}  // namespace
}  // namespace xprobe::test::x86
