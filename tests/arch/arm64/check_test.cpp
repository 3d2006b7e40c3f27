// Every refusal of the AArch64 checker, and what it accepts.
#include <gtest/gtest.h>

#include <vector>

#include "arch/arm64/arm64_check.h"
#include "arch/probe_point_check.h"

namespace xprobe::arch::arm64 {
namespace {

constexpr uint64_t kStart = 0x1000;

std::vector<uint8_t> words_to_bytes(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> bytes;
  for (uint32_t w : words)
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return bytes;
}

constexpr uint32_t kAdd = 0x8b020020;    // add x0, x1, x2
constexpr uint32_t kRet = 0xd65f03c0;    // ret
constexpr uint32_t kBl = 0x94000010;     // bl .+0x40
constexpr uint32_t kLdaxr = 0xc85ffc20;  // ldaxr x0, [x1]
constexpr uint32_t kStlxr = 0xc803fc40;  // stlxr w3, x0, [x2]
constexpr uint32_t kCbnz = 0x35ffffa3;   // cbnz w3, .-12

TEST(Arm64Check, AcceptsAnOrdinaryInstruction) {
  const auto bytes = words_to_bytes({kAdd, kBl, kRet});
  const auto outcome = check_probe_point(bytes, kStart, kStart);
  EXPECT_EQ(outcome.verdict, Verdict::Accepted);
  EXPECT_EQ(outcome.insn_address, kStart);
  EXPECT_EQ(outcome.insn_length, 4);
  EXPECT_EQ(outcome.kind, "none");
  EXPECT_EQ(outcome.bytes, std::vector<uint8_t>({0x20, 0x00, 0x02, 0x8b}));
  EXPECT_EQ(outcome.message(), "Probe at address 0x1000 accepted: 20 00 02 8b (4 bytes, none)");
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 4).kind, "bl");  // simulated classes are accepted
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 8).kind, "ret");
}

TEST(Arm64Check, MisalignedAddressIsRefused) {
  const auto bytes = words_to_bytes({kAdd, kRet});
  for (uint64_t delta : {1, 2, 3, 5}) {
    const auto outcome = check_probe_point(bytes, kStart, kStart + delta);
    EXPECT_EQ(outcome.verdict, Verdict::Misaligned) << delta;
    EXPECT_NE(outcome.message().find("not a multiple of 4"), std::string::npos) << outcome.message();
    EXPECT_NE(outcome.message().find("-EILSEQ"), std::string::npos);
  }
  EXPECT_EQ(check_probe_point(bytes, kStart + 2, kStart + 4).verdict, Verdict::Misaligned);  // bad symbol
}

TEST(Arm64Check, OutOfRangeIsRefused) {
  const auto bytes = words_to_bytes({kAdd, kRet});
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart - 4).verdict, Verdict::OutOfRange);
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 8).verdict, Verdict::OutOfRange);
  std::vector<uint8_t> truncated = bytes;
  truncated.pop_back();
  EXPECT_EQ(check_probe_point(truncated, kStart, kStart + 4).verdict, Verdict::OutOfRange);
  EXPECT_EQ(check_probe_point({}, kStart, kStart).verdict, Verdict::OutOfRange);
}

TEST(Arm64Check, UnallocatedIsAnUnknownInstructionInMemoryOrder) {
  const auto bytes = words_to_bytes({kAdd, 0x55000000, 0x00000000, kRet});
  const auto outcome = check_probe_point(bytes, kStart, kStart + 4);
  EXPECT_EQ(outcome.verdict, Verdict::UnknownInstruction);
  EXPECT_EQ(outcome.message(), "Could not insert probe at address 0x1004 due to: Unknown instruction: 00 00 00 55");
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 8).message(),
            "Could not insert probe at address 0x1008 due to: Unknown instruction: 00 00 00 00");  // UDF #0
  // Fixed width: an unknown word before the probe does not hide the boundary.
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 12).verdict, Verdict::Accepted);
}

TEST(Arm64Check, NeverProbeClassesAreRefusedWithTheirReason) {
  struct Case {
    uint32_t word;
    const char* why;
  };
  const Case cases[] = {{0xd4000001, "SVC"},          {0xd4207d00, "BRK"},
                        {0xd45e0000, "HLT"},          {0xd4000022, "HVC"},
                        {0xd4000043, "SMC"},          {0xd69f03e0, "exception returns"},
                        {0xd69f0bff, "exception returns"},  {0xd6bf03e0, "DRPS"},
                        {0xd4a00001, "DCPS"},         {0xd50342df, "interrupt masks"},
                        {0xd51b4220, "interrupt masks"},    {0xd50041bf, "SPSel"},
                        {0xd5181006, "EL1 or higher"},      {0xd5100247, "debug"},
                        {0xd508871f, "privileged system instruction"}};
  for (const auto& c : cases) {
    const auto bytes = words_to_bytes({kAdd, c.word});
    const auto outcome = check_probe_point(bytes, kStart, kStart + 4);
    EXPECT_EQ(outcome.verdict, Verdict::Unprobeable) << std::hex << c.word;
    EXPECT_EQ(outcome.kind, "never");
    EXPECT_NE(outcome.message().find(c.why), std::string::npos) << outcome.message();
  }
}

TEST(Arm64Check, ExclusiveSequenceIsRefusedFromLoadToStore) {
  const auto bytes = words_to_bytes({kAdd, kLdaxr, kAdd, kStlxr, kCbnz, kRet});
  EXPECT_TRUE(check_probe_point(bytes, kStart, kStart).accepted());
  const auto at_load = check_probe_point(bytes, kStart, kStart + 4);
  EXPECT_EQ(at_load.verdict, Verdict::Unprobeable);
  EXPECT_EQ(at_load.kind, "exclusive");
  const auto inside = check_probe_point(bytes, kStart, kStart + 8);
  EXPECT_EQ(inside.verdict, Verdict::Unprobeable);
  EXPECT_NE(inside.reason.find("sequence that starts at 0x1004"), std::string::npos) << inside.reason;
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 12).verdict, Verdict::Unprobeable);  // the store
  EXPECT_TRUE(check_probe_point(bytes, kStart, kStart + 16).accepted());  // after the store
  EXPECT_TRUE(check_probe_point(bytes, kStart, kStart + 20).accepted());
}

TEST(Arm64Check, UnclosedLoadExclusiveKeepsTheRestRefused) {
  const auto bytes = words_to_bytes({kLdaxr, kAdd, kAdd, kRet});
  EXPECT_EQ(check_probe_point(bytes, kStart, kStart + 12).verdict, Verdict::Unprobeable);
}

TEST(Arm64Check, ScalableVectorInstructionsAreRefused) {
  const auto bytes = words_to_bytes({0x2518e3e0});  // ptrue p0.b
  const auto outcome = check_probe_point(bytes, kStart, kStart);
  EXPECT_EQ(outcome.verdict, Verdict::Unprobeable);
  EXPECT_EQ(outcome.kind, "sve");
}

TEST(Arm64Check, ArchitectureDispatch) {
  const auto bytes = words_to_bytes({kAdd, 0xd4000001});
  EXPECT_TRUE(arch::check_probe_point(insn::Arch::AArch64, bytes, kStart, kStart).accepted());
  EXPECT_EQ(arch::check_probe_point(insn::Arch::AArch64, bytes, kStart, kStart + 4).verdict, Verdict::Unprobeable);
  EXPECT_EQ(arch::check_probe_point(insn::Arch::AArch64, bytes, kStart, kStart + 6).verdict, Verdict::Misaligned);
}

}  // namespace
}  // namespace xprobe::arch::arm64
