// The AArch64 jump planner (arch/arm64/probe_support/jump_patch.h): which places become a B,
// which instruction it displaces, and why the others stay breakpoints. The functions are
// words assembled by aarch64-linux-gnu-as; pure, so these run on the build machine and inside
// the AArch64 VM.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "arch/arm64/probe_support/jump_patch.h"

namespace xprobe::arch::arm64 {
namespace {

constexpr uint64_t kFunction = 0x400000;

constexpr uint32_t kBtiC = 0xd503245f;      // bti c
constexpr uint32_t kBtiJ = 0xd503249f;      // bti j
constexpr uint32_t kPaciasp = 0xd503233f;   // paciasp
constexpr uint32_t kStpPre = 0xa9bf7bfd;    // stp x29, x30, [sp, #-16]!
constexpr uint32_t kMovFp = 0x910003fd;     // mov x29, sp
constexpr uint32_t kAdd = 0x8b020020;       // add x0, x1, x2
constexpr uint32_t kBl = 0x94000010;        // bl .+0x40
constexpr uint32_t kBlr = 0xd63f0220;       // blr x17
constexpr uint32_t kBlrX30 = 0xd63f03c0;    // blr x30
constexpr uint32_t kBr = 0xd61f0200;        // br x16
constexpr uint32_t kRet = 0xd65f03c0;       // ret
constexpr uint32_t kBackTo4From12 = 0x17fffffe;  // b .-8 (at +12: to +4)
constexpr uint32_t kBOut = 0x14100000;      // b .+0x400000
constexpr uint32_t kLdxr = 0xc85f7c20;      // ldxr x0, [x1]
constexpr uint32_t kSvc = 0xd4000001;       // svc #0
constexpr uint32_t kLdrQ = 0x9c000101;      // ldr q1, .+0x20

std::vector<uint8_t> bytes_of(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> bytes;
  for (uint32_t word : words)
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<uint8_t>(word >> shift));
  return bytes;
}

struct Function {
  explicit Function(std::vector<uint32_t> words) : bytes(bytes_of(words)) {
    function.code = CodeRange{bytes, kFunction};
  }
  std::vector<uint8_t> bytes;
  JumpPatchFunction function;
};

Result<Arm64JumpPatch> plan(const Function& f, uint64_t offset, JumpPatchPlace place = JumpPatchPlace::FunctionEntry) {
  return plan_jump_patch(f.function, kFunction + offset, place);
}

TEST(Arm64JumpPatch, AnEntryWithoutLandingPadDisplacesItsFirstInstruction) {
  Function f({kStpPre, kMovFp, kBl, kRet});
  auto patch = plan(f, 0);
  ASSERT_TRUE(patch) << patch.error().message;
  EXPECT_EQ(patch->address, kFunction);
  EXPECT_EQ(patch->reported_pc, kFunction);
  EXPECT_EQ(patch->displaced.word, kStpPre);
  EXPECT_FALSE(patch->strip_link_register);
}

TEST(Arm64JumpPatch, OnlyTheEntryAndReturnSitesBecomeJumps) {
  Function f({kStpPre, kMovFp, kAdd, kRet});
  auto mid = plan(f, 8);
  ASSERT_FALSE(mid);
  EXPECT_NE(mid.error().message.find("first instruction"), std::string::npos) << mid.error().message;
  auto not_after_call = plan(f, 8, JumpPatchPlace::ReturnSite);
  ASSERT_FALSE(not_after_call);
  EXPECT_NE(not_after_call.error().message.find("does not follow a call"), std::string::npos);
  auto misaligned = plan(f, 2, JumpPatchPlace::ReturnSite);
  ASSERT_FALSE(misaligned);
  EXPECT_NE(misaligned.error().message.find("multiple of 4"), std::string::npos);
}

TEST(Arm64JumpPatch, AReturnSiteFollowsABlOrBlr) {
  Function f({kStpPre, kBl, kAdd, kBlr, kMovFp, kRet});
  for (uint64_t offset : {8u, 16u}) {
    auto patch = plan(f, offset, JumpPatchPlace::ReturnSite);
    ASSERT_TRUE(patch) << offset << ": " << patch.error().message;
    EXPECT_EQ(patch->address, kFunction + offset);
    EXPECT_FALSE(patch->strip_link_register);
  }
}

TEST(Arm64JumpPatch, AReturnSiteThatIsALandingPadStaysABreakpoint) {
  Function f({kStpPre, kBl, kBtiJ, kRet});
  auto patch = plan(f, 8, JumpPatchPlace::ReturnSite);
  ASSERT_FALSE(patch);
  EXPECT_NE(patch.error().message.find("landing pad"), std::string::npos) << patch.error().message;
}

TEST(Arm64JumpPatch, TheLandingPadAtTheEntryStaysAndTheJumpFollowsIt) {
  Function bti({kBtiC, kStpPre, kBl, kRet});
  auto patch = plan(bti, 0);
  ASSERT_TRUE(patch) << patch.error().message;
  EXPECT_EQ(patch->address, kFunction + 4);
  EXPECT_EQ(patch->reported_pc, kFunction);
  EXPECT_EQ(patch->displaced.word, kStpPre);
  EXPECT_FALSE(patch->strip_link_register);

  Function pac({kPaciasp, kStpPre, kBl, kRet});
  patch = plan(pac, 0);
  ASSERT_TRUE(patch) << patch.error().message;
  EXPECT_EQ(patch->address, kFunction + 4);
  EXPECT_EQ(patch->reported_pc, kFunction);
  EXPECT_TRUE(patch->strip_link_register);  // x30 was signed by then
}

TEST(Arm64JumpPatch, AfterALandingPadNothingElseMayReachTheDisplacedInstruction) {
  Function loop({kPaciasp, kStpPre, kAdd, kBackTo4From12, kRet});
  auto patch = plan(loop, 0);
  ASSERT_FALSE(patch);
  EXPECT_NE(patch.error().message.find("0x400004"), std::string::npos) << patch.error().message;

  Function indirect({kBtiC, kStpPre, kBr});
  patch = plan(indirect, 0);
  ASSERT_FALSE(patch);
  EXPECT_NE(patch.error().message.find("indirect jump"), std::string::npos) << patch.error().message;

  Function pad_after({kBtiC, kBtiJ, kRet});
  EXPECT_FALSE(plan(pad_after, 0));

  Function only_pad({kBtiC});
  EXPECT_FALSE(plan(only_pad, 0));

  Function landing({kBtiC, kStpPre, kRet});
  landing.function.landing_pads = {kFunction + 4};
  EXPECT_FALSE(plan(landing, 0));
  landing.function.landing_pads.clear();
  landing.function.other_symbols = {kFunction + 4};
  EXPECT_FALSE(plan(landing, 0));
}

TEST(Arm64JumpPatch, AfterALandingPadJumpsOutMustLandOnKnownCode) {
  Function f({kBtiC, kStpPre, kBOut, kRet});
  auto unknown = plan(f, 0);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("code nothing describes"), std::string::npos) << unknown.error().message;

  f.function.foreign = [](uint64_t) { return ForeignTarget{ForeignCode::FunctionStart, {}}; };
  EXPECT_TRUE(plan(f, 0));

  // A fragment (a stripped foo.cold) whose jump comes back to entry + 4.
  static const std::vector<uint8_t> cold = bytes_of({0x17effffd /* b .-0x40000c: at 0x800010, to 0x400004 */});
  static const std::vector<uint8_t> cold_padded = [] {
    std::vector<uint8_t> bytes = bytes_of({kAdd, kAdd});
    bytes.insert(bytes.end(), cold.begin(), cold.end());
    return bytes;
  }();
  f.function.foreign = [](uint64_t target) {
    return ForeignTarget{ForeignCode::Fragment, CodeRange{cold_padded, target}};
  };
  auto back = plan(f, 0);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("0x400004"), std::string::npos) << back.error().message;
}

TEST(Arm64JumpPatch, WhatCannotBeRelocatedStaysABreakpointWithTheReason) {
  for (uint32_t word : {kLdxr, kSvc, kBlrX30}) {
    Function f({word, kRet});
    auto patch = plan(f, 0);
    EXPECT_FALSE(patch) << std::hex << word;
  }
  Function ldr_q({kLdrQ, kRet});
  EXPECT_TRUE(plan(ldr_q, 0));  // re-encoded from the trampoline when the literal is in reach
}

}  // namespace
}  // namespace xprobe::arch::arm64
