// Field extraction and classification of hand-encoded words (encodings from the Arm ARM).
#include <gtest/gtest.h>

#include <array>

#include "insn/arm64/arm64_insn.h"
#include "insn/arm64/arm64_summary.h"

namespace xprobe::insn::arm64 {
namespace {

constexpr uint64_t kPc = 0x400000;

TEST(Arm64Decoder, UnconditionalBranches) {
  auto b = decode(0x14000001, kPc);
  EXPECT_EQ(b.cls, InsnClass::B);
  EXPECT_EQ(b.target, kPc + 4);
  auto back = decode(0x17ffffff, kPc);
  EXPECT_EQ(back.offset, -4);
  EXPECT_EQ(back.target, kPc - 4);
  auto bl = decode(0x94000010, kPc);
  EXPECT_EQ(bl.cls, InsnClass::Bl);
  EXPECT_EQ(bl.target, kPc + 0x40);
  auto far = decode(0x16000000, kPc + (uint64_t{1} << 28));  // imm26 = most negative
  EXPECT_EQ(far.offset, -(int64_t{1} << 27));
}

TEST(Arm64Decoder, ConditionalBranches) {
  auto beq = decode(0x54000040, kPc);
  EXPECT_EQ(beq.cls, InsnClass::BCond);
  EXPECT_EQ(beq.cond, 0);
  EXPECT_EQ(beq.target, kPc + 8);
  auto blt = decode(0x5400004b, kPc);
  EXPECT_EQ(blt.cond, 0xb);
  auto bcne = decode(0x54ffffd1, kPc);
  EXPECT_EQ(bcne.cls, InsnClass::BCond);
  EXPECT_TRUE(bcne.consistent_hint);
  EXPECT_EQ(bcne.cond, 1);
  EXPECT_EQ(bcne.target, kPc - 8);
}

TEST(Arm64Decoder, CompareAndTestBranches) {
  auto cbz = decode(0x34000041, kPc);
  EXPECT_EQ(cbz.cls, InsnClass::Cbz);
  EXPECT_EQ(cbz.rn, 1);
  EXPECT_FALSE(cbz.is_64bit);
  EXPECT_EQ(cbz.target, kPc + 8);
  auto cbnz = decode(0xb5ffffe2, kPc);
  EXPECT_EQ(cbnz.cls, InsnClass::Cbnz);
  EXPECT_TRUE(cbnz.is_64bit);
  EXPECT_EQ(cbnz.rn, 2);
  EXPECT_EQ(cbnz.target, kPc - 4);
  auto tbz = decode(0x36280063, kPc);
  EXPECT_EQ(tbz.cls, InsnClass::Tbz);
  EXPECT_EQ(tbz.test_bit, 5);
  EXPECT_EQ(tbz.rn, 3);
  EXPECT_EQ(tbz.target, kPc + 12);
  auto tbnz = decode(0xb7ffffc4, kPc);
  EXPECT_EQ(tbnz.cls, InsnClass::Tbnz);
  EXPECT_EQ(tbnz.test_bit, 63);
  EXPECT_EQ(tbnz.target, kPc - 8);
}

TEST(Arm64Decoder, PcRelativeAddresses) {
  auto adr = decode(0x30000000, kPc + 0x10);  // adr x0, .+1
  EXPECT_EQ(adr.cls, InsnClass::Adr);
  EXPECT_EQ(adr.target, kPc + 0x11);
  auto adrp = decode(0xb0000001, kPc + 0x123);  // adrp x1, page + 1
  EXPECT_EQ(adrp.cls, InsnClass::Adrp);
  EXPECT_EQ(adrp.rd, 1);
  EXPECT_EQ(adrp.target, kPc + 0x1000);
  auto adrp_back = decode(0x90ffffe2 | (3u << 29), kPc);  // immhi all ones, immlo 11: -1 page
  EXPECT_EQ(adrp_back.target, kPc - 0x1000);
}

TEST(Arm64Decoder, LiteralLoads) {
  struct Case {
    uint32_t word;
    InsnClass cls;
    uint8_t size;
  };
  const std::array<Case, 7> cases = {{{0x58000040, InsnClass::LdrLiteral, 8},
                                      {0x18000040, InsnClass::LdrLiteral, 4},
                                      {0x1c000040, InsnClass::LdrLiteralSimd, 4},
                                      {0x5c000040, InsnClass::LdrLiteralSimd, 8},
                                      {0x9c000040, InsnClass::LdrLiteralSimd, 16},
                                      {0x98000040, InsnClass::LdrswLiteral, 4},
                                      {0xd8000040, InsnClass::PrfmLiteral, 0}}};
  for (const auto& c : cases) {
    const auto insn = decode(c.word, kPc);
    EXPECT_EQ(insn.cls, c.cls) << std::hex << c.word;
    EXPECT_EQ(insn.literal_size, c.size) << std::hex << c.word;
    EXPECT_EQ(insn.target, kPc + 8) << std::hex << c.word;
  }
  EXPECT_EQ(decode(0xdc000040, kPc).cls, InsnClass::Unallocated);  // SIMD opc = 11
}

TEST(Arm64Decoder, RegisterBranchesAndPointerAuthentication) {
  EXPECT_EQ(decode(0xd61f00a0, kPc).cls, InsnClass::Br);
  EXPECT_EQ(decode(0xd61f00a0, kPc).rn, 5);
  EXPECT_EQ(decode(0xd63f00c0, kPc).cls, InsnClass::Blr);
  auto ret = decode(0xd65f03c0, kPc);
  EXPECT_EQ(ret.cls, InsnClass::Ret);
  EXPECT_EQ(ret.rn, 30);
  auto retaa = decode(0xd65f0bff, kPc);
  EXPECT_EQ(retaa.cls, InsnClass::Ret);
  EXPECT_EQ(retaa.pac, PacKey::A);
  EXPECT_EQ(retaa.rn, 30);
  EXPECT_TRUE(retaa.pac_sp_modifier);
  EXPECT_EQ(decode(0xd65f0fff, kPc).pac, PacKey::B);
  auto braa = decode(0xd71f0909, kPc);
  EXPECT_EQ(braa.cls, InsnClass::Br);
  EXPECT_EQ(braa.rn, 8);
  EXPECT_EQ(braa.rm, 9);
  auto braaz = decode(0xd61f097f, kPc);
  EXPECT_EQ(braaz.cls, InsnClass::Br);
  EXPECT_TRUE(braaz.pac_zero_modifier);
  auto blrabz = decode(0xd63f0e5f, kPc);
  EXPECT_EQ(blrabz.cls, InsnClass::Blr);
  EXPECT_EQ(blrabz.pac, PacKey::B);
  EXPECT_EQ(blrabz.rn, 18);
  EXPECT_EQ(decode(0xd73f083f, kPc).rm, 31);  // blraa x1, sp
  EXPECT_EQ(decode(0xd65f0be1, kPc).cls, InsnClass::Unallocated);  // RETAA needs Rn = 31
}

TEST(Arm64Decoder, ExclusivesAreLoadsOrStores) {
  auto ldxr = decode(0xc85f7c20, kPc);  // ldxr x0, [x1]
  EXPECT_EQ(ldxr.cls, InsnClass::Exclusive);
  EXPECT_EQ(ldxr.exclusive, ExclusiveKind::Load);
  auto stxr = decode(0xc8027c20, kPc);  // stxr w2, x0, [x1]
  EXPECT_EQ(stxr.exclusive, ExclusiveKind::Store);
  auto ldaxp = decode(0xc87f8820, kPc);  // ldaxp x0, x2, [x1]
  EXPECT_EQ(ldaxp.exclusive, ExclusiveKind::Load);
  EXPECT_TRUE(ldaxp.exclusive_pair);
  EXPECT_EQ(decode(0xc8dffc20, kPc).cls, InsnClass::Other);  // ldar x0, [x1] is not exclusive
  EXPECT_EQ(decode(0xc8a07c41, kPc).cls, InsnClass::Other);  // cas x0, x1, [x2]
}

TEST(Arm64Decoder, NeverProbeClassesCarryTheirReason) {
  struct Case {
    uint32_t word;
    NeverReason reason;
  };
  const std::array<Case, 14> cases = {{{0xd4000001, NeverReason::SupervisorCall},
                                       {0xd4000022, NeverReason::HypervisorCall},
                                       {0xd4000043, NeverReason::SecureMonitorCall},
                                       {0xd4207d00, NeverReason::Breakpoint},
                                       {0xd45e0000, NeverReason::Halt},
                                       {0xd69f03e0, NeverReason::ExceptionReturn},
                                       {0xd69f0bff, NeverReason::ExceptionReturn},
                                       {0xd6bf03e0, NeverReason::DebugRestore},
                                       {0xd4a00001, NeverReason::DebugStateChange},
                                       {0xd50342df, NeverReason::InterruptMaskWrite},  // msr daifset, #2
                                       {0xd51b4220, NeverReason::InterruptMaskWrite},  // msr daif, x0
                                       {0xd50041bf, NeverReason::PrivilegedPstateWrite},  // msr spsel, #1
                                       {0xd5181006, NeverReason::PrivilegedRegisterWrite},  // msr sctlr_el1, x6
                                       {0xd5100247, NeverReason::DebugRegister}}};        // msr mdscr_el1, x7
  for (const auto& c : cases) {
    const auto insn = decode(c.word, kPc);
    EXPECT_EQ(insn.cls, InsnClass::NeverProbe) << std::hex << c.word;
    EXPECT_EQ(insn.never, c.reason) << std::hex << c.word;
    EXPECT_NE(insn.never, NeverReason::None);
  }
  EXPECT_EQ(decode(0xd53b4220, kPc).cls, InsnClass::Other);  // mrs x0, daif: reading is harmless
  EXPECT_EQ(decode(0xd51b4201, kPc).cls, InsnClass::Other);  // msr nzcv, x1
  EXPECT_EQ(decode(0xd5380005, kPc).cls, InsnClass::Other);  // mrs x5, midr_el1 (emulated at EL0)
  EXPECT_EQ(decode(0xd5381000, kPc).never, NeverReason::PrivilegedRegisterRead);  // mrs x0, sctlr_el1
  EXPECT_EQ(decode(0xd50b742c, kPc).cls, InsnClass::Other);  // dc zva, x12
  EXPECT_EQ(decode(0xd508871f, kPc).never, NeverReason::PrivilegedSystemInsn);  // tlbi vmalle1
}

TEST(Arm64Decoder, HintsAndLandingPads) {
  auto nop = decode(0xd503201f, kPc);
  EXPECT_EQ(nop.cls, InsnClass::Hint);
  EXPECT_EQ(nop.hint, HintKind::Nop);
  EXPECT_FALSE(nop.landing_pad);
  auto bti_c = decode(0xd503245f, kPc);
  EXPECT_EQ(bti_c.hint, HintKind::Bti);
  EXPECT_TRUE(bti_c.landing_pad);
  auto paciasp = decode(0xd503233f, kPc);
  EXPECT_EQ(paciasp.hint, HintKind::PacSign);
  EXPECT_TRUE(paciasp.landing_pad);
  auto autiasp = decode(0xd50323bf, kPc);
  EXPECT_EQ(autiasp.hint, HintKind::PacAuth);
  EXPECT_FALSE(autiasp.landing_pad);
  EXPECT_EQ(decode(0xd50320ff, kPc).hint, HintKind::PacStrip);  // xpaclri
  EXPECT_EQ(decode(0xd5032abf, kPc).cls, InsnClass::Hint);      // hint #0x55: an architectural NOP
}

TEST(Arm64Decoder, SummaryOfBytesInMemoryOrder) {
  const std::array<uint8_t, 4> bl = {0x10, 0x00, 0x00, 0x94};
  const auto summary = summarize(bl, 0x1000);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->length, 4);
  EXPECT_EQ(summary->kind, "bl");
  EXPECT_EQ(summary->target, 0x1040u);
  const std::array<uint8_t, 4> add = {0x20, 0x00, 0x02, 0x8b};  // add x0, x1, x2
  EXPECT_EQ(summarize(add, 0)->kind, "none");
  EXPECT_FALSE(summarize(add, 0)->target);
  const std::array<uint8_t, 4> udf = {0, 0, 0, 0};
  EXPECT_FALSE(summarize(udf, 0));
  const std::array<uint8_t, 3> short_bytes = {0x10, 0x00, 0x00};
  EXPECT_FALSE(summarize(short_bytes, 0));
}

TEST(Arm64Decoder, ScalableVectorSpaceIsMarked) {
  EXPECT_EQ(decode(0x2518e3e0, kPc).cls, InsnClass::Sve);  // ptrue p0.b
  EXPECT_EQ(decode(0xc0080001, kPc).cls, InsnClass::Sve);  // zero {za0.d}
}

}  // namespace
}  // namespace xprobe::insn::arm64
