// Hand-picked encodings; every expected value is worked out from the Intel SDM vol. 2 /
// AMD APM vol. 3 encoding rules (cited per test), not from the decoder's output.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "insn/x86/decoder.h"

namespace xprobe::insn::x86 {
namespace {

constexpr DecoderConfig kAmd64{Mode::Long64, Vendor::Amd};
constexpr DecoderConfig kIntel64{Mode::Long64, Vendor::Intel};
constexpr DecoderConfig kAmd32{Mode::Protected32, Vendor::Amd};

struct Decoded {
  DecodeStatus status;
  X86Insn insn;
};

Decoded run(std::vector<uint8_t> bytes, const DecoderConfig& config = kAmd64, uint64_t address = 0x401000) {
  Decoded d{};
  d.status = decode(bytes, address, config, d.insn);
  return d;
}

uint8_t length_of(std::vector<uint8_t> bytes, const DecoderConfig& config = kAmd64) {
  const Decoded d = run(std::move(bytes), config);
  EXPECT_EQ(d.status, DecodeStatus::Ok);
  return d.status == DecodeStatus::Ok ? d.insn.length : 0;
}

// SDM vol. 2 2.2.1.6: mod=00 r/m=101 is RIP + disp32 in 64-bit mode.
TEST(X86Decoder, RipRelativeLeaFromTheSeedMessage) {
  const Decoded d = run({0x48, 0x8d, 0x15, 0xdb, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  const X86Insn& i = d.insn;
  EXPECT_EQ(i.length, 7);
  EXPECT_EQ(i.rex, 0x48);
  EXPECT_EQ(i.map, OpcodeMap::Primary);
  EXPECT_EQ(i.opcode, 0x8d);
  EXPECT_EQ(i.opcode_offset, 1);
  EXPECT_TRUE(i.has_modrm);
  EXPECT_EQ(i.modrm, 0x15);
  EXPECT_EQ(i.modrm_offset, 2);
  EXPECT_FALSE(i.has_sib);
  EXPECT_EQ(i.disp_offset, 3);
  EXPECT_EQ(i.disp_size, 4);
  EXPECT_EQ(i.disp, -0x25);
  EXPECT_TRUE(i.rip_relative);
  EXPECT_EQ(i.imm_size, 0);
  EXPECT_EQ(i.flow, FlowKind::None);
  EXPECT_FALSE(i.has_rel_target);
}

// In 32-bit mode the same ModRM is an absolute disp32 (SDM vol. 2 Table 2-2).
TEST(X86Decoder, Disp32IsAbsoluteIn32BitMode) {
  const Decoded d = run({0x8b, 0x05, 0x00, 0x10, 0x00, 0x00}, kAmd32);
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 6);
  EXPECT_FALSE(d.insn.rip_relative);
  EXPECT_EQ(d.insn.disp, 0x1000);
}

// SDM vol. 2 Table 2-3: SIB with base=101 and mod=00 has a disp32 and no base.
TEST(X86Decoder, SibForms) {
  Decoded d = run({0x8b, 0x44, 0x24, 0x08});  // mov eax,[rsp+8]
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 4);
  EXPECT_TRUE(d.insn.has_sib);
  EXPECT_EQ(d.insn.sib, 0x24);
  EXPECT_EQ(d.insn.disp_offset, 3);
  EXPECT_EQ(d.insn.disp_size, 1);
  EXPECT_EQ(d.insn.disp, 8);
  d = run({0x8b, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00});  // mov eax,[0x1000]
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 7);
  EXPECT_EQ(d.insn.disp_size, 4);
  EXPECT_EQ(d.insn.disp, 0x1000);
  EXPECT_FALSE(d.insn.rip_relative);
  d = run({0x8b, 0x84, 0x88, 0xf0, 0xff, 0xff, 0xff});  // mov eax,[rax+rcx*4-0x10]
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 7);
  EXPECT_EQ(d.insn.disp, -0x10);
}

// SDM vol. 2 Table 2-1: 16-bit addressing (67 in 32-bit mode): r/m=110 mod=00 is disp16.
TEST(X86Decoder, SixteenBitAddressingIn32BitMode) {
  EXPECT_EQ(length_of({0x67, 0x8b, 0x06, 0x34, 0x12}, kAmd32), 5);
  EXPECT_EQ(length_of({0x67, 0x8b, 0x46, 0x08}, kAmd32), 4);
  EXPECT_EQ(length_of({0x67, 0x8b, 0x84, 0x34, 0x12}, kAmd32), 5);  // no SIB in 16-bit addressing
  EXPECT_EQ(length_of({0x67, 0x8b, 0x04}, kAmd32), 3);
  // In 64-bit mode 67 selects 32-bit addressing, which keeps SIB and disp32.
  EXPECT_EQ(length_of({0x67, 0x8b, 0x04, 0x24}), 4);
}

TEST(X86Decoder, RelativeBranchesAndTargets) {
  Decoded d = run({0xe8, 0x00, 0x00, 0x00, 0x00}, kAmd64, 0x1000);
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.flow, FlowKind::Call);
  EXPECT_TRUE(d.insn.has_rel_target);
  EXPECT_EQ(d.insn.rel_target, 0x1005u);
  EXPECT_EQ(d.insn.imm_offset, 1);
  EXPECT_EQ(d.insn.imm_size, 4);
  d = run({0xeb, 0xfe}, kAmd64, 0x2000);
  EXPECT_EQ(d.insn.flow, FlowKind::Jmp);
  EXPECT_EQ(d.insn.rel_target, 0x2000u);
  d = run({0x0f, 0x84, 0x10, 0x00, 0x00, 0x00}, kAmd64, 0x2000);
  EXPECT_EQ(d.insn.flow, FlowKind::Jcc);
  EXPECT_EQ(d.insn.length, 6);
  EXPECT_EQ(d.insn.map, OpcodeMap::Map0F);
  EXPECT_EQ(d.insn.opcode, 0x84);
  EXPECT_EQ(d.insn.rel_target, 0x2016u);
  d = run({0x74, 0xf0}, kAmd64, 0x2000);
  EXPECT_EQ(d.insn.flow, FlowKind::Jcc);
  EXPECT_EQ(d.insn.rel_target, 0x1ff2u);
  d = run({0xe2, 0xfe}, kAmd64, 0x3000);
  EXPECT_EQ(d.insn.flow, FlowKind::Loop);
  EXPECT_EQ(d.insn.rel_target, 0x3000u);
  d = run({0xe3, 0x05}, kAmd64, 0x3000);
  EXPECT_EQ(d.insn.flow, FlowKind::Loop);
  // 32-bit mode: EIP wraps at 4 GiB.
  d = run({0xe9, 0x00, 0x00, 0x00, 0x80}, kAmd32, 0x80000000);
  EXPECT_EQ(d.insn.rel_target, 0x5u);
}

// 66 on a near branch in 64-bit mode: Intel ignores it (SDM vol. 2 JMP: "In 64-bit mode the
// operand size is fixed at 64 bits"), AMD honours it (APM vol. 3 JMP: rel16, IP truncated).
TEST(X86Decoder, VendorDependentOperandSizeOnNearBranches) {
  Decoded amd = run({0x66, 0xe9, 0x34, 0x12, 0x00, 0x00}, kAmd64, 0x401000);
  ASSERT_EQ(amd.status, DecodeStatus::Ok);
  EXPECT_EQ(amd.insn.length, 4);
  EXPECT_EQ(amd.insn.imm_size, 2);
  EXPECT_EQ(amd.insn.rel_target, (0x401004u + 0x1234u) & 0xffffu);
  Decoded intel = run({0x66, 0xe9, 0x34, 0x12, 0x00, 0x00}, kIntel64, 0x401000);
  ASSERT_EQ(intel.status, DecodeStatus::Ok);
  EXPECT_EQ(intel.insn.length, 6);
  EXPECT_EQ(intel.insn.rel_target, 0x401006u + 0x1234u);
  EXPECT_EQ(length_of({0x66, 0x0f, 0x85, 0x00, 0x00, 0x00, 0x00}, kIntel64), 7);
  EXPECT_EQ(length_of({0x66, 0x0f, 0x85, 0x00, 0x00, 0x00, 0x00}, kAmd64), 5);
  EXPECT_EQ(length_of({0x66, 0xe8, 0x00, 0x00, 0x00, 0x00}, kIntel64), 6);
  EXPECT_EQ(length_of({0x66, 0xe8, 0x00, 0x00, 0x00, 0x00}, kAmd64), 4);
  // REX.W takes precedence over 66 (SDM vol. 2 2.2.1.2): rel32 on both.
  EXPECT_EQ(length_of({0x66, 0x48, 0xe9, 0x00, 0x00, 0x00, 0x00}, kAmd64), 7);
  // 32-bit mode: 66 always gives rel16 (both vendors).
  EXPECT_EQ(length_of({0x66, 0xe8, 0x10, 0x00}, kAmd32), 4);
}

// SDM vol. 2 MOV (B8+r io with REX.W), MOV moffs (A0-A3), ENTER (iw ib), Iz with 66/REX.W.
TEST(X86Decoder, ImmediateSizes) {
  Decoded d = run({0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 10);
  EXPECT_EQ(d.insn.imm_offset, 2);
  EXPECT_EQ(d.insn.imm_size, 8);
  EXPECT_EQ(d.insn.imm, 0x1122334455667788);
  EXPECT_EQ(length_of({0xb8, 1, 2, 3, 4}), 5);
  EXPECT_EQ(length_of({0x66, 0xb8, 1, 2}), 4);
  d = run({0x48, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 10);
  EXPECT_EQ(d.insn.disp_size, 8);
  EXPECT_EQ(d.insn.disp, 0x0807060504030201);
  EXPECT_EQ(length_of({0x67, 0xa1, 1, 2, 3, 4}), 6);
  EXPECT_EQ(length_of({0xa1, 1, 2, 3, 4}, kAmd32), 5);
  EXPECT_EQ(length_of({0x67, 0xa1, 1, 2}, kAmd32), 4);
  d = run({0xc8, 0x10, 0x00, 0x01});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.imm, 0x10);
  EXPECT_EQ(d.insn.imm_size, 2);
  EXPECT_EQ(d.insn.imm2, 1u);
  EXPECT_EQ(d.insn.imm2_offset, 3);
  EXPECT_EQ(length_of({0x66, 0x81, 0xc0, 0x34, 0x12}), 5);
  EXPECT_EQ(length_of({0x66, 0x48, 0x81, 0xc0, 1, 2, 3, 4}), 8);
  EXPECT_EQ(length_of({0x48, 0x83, 0xec, 0x08}), 4);
  EXPECT_EQ(length_of({0xf6, 0x00, 0x01}), 3);  // test Eb,Ib
  EXPECT_EQ(length_of({0xf6, 0x10}), 2);        // not Eb
  EXPECT_EQ(length_of({0xf7, 0x00, 1, 2, 3, 4}), 6);
  EXPECT_EQ(length_of({0xc2, 0x08, 0x00}), 3);
  d = run({0x6a, 0xff});
  EXPECT_EQ(d.insn.imm, -1);
  // Far pointer: offset (4, or 2 with 66) then a 2-byte selector.
  EXPECT_EQ(length_of({0x9a, 1, 2, 3, 4, 5, 6}, kAmd32), 7);
  EXPECT_EQ(length_of({0x66, 0xea, 1, 2, 3, 4}, kAmd32), 6);
  // SSE4a EXTRQ/INSERTQ carry two imm8 (APM vol. 4).
  EXPECT_EQ(length_of({0x66, 0x0f, 0x78, 0xc1, 0x04, 0x08}), 6);
  EXPECT_EQ(length_of({0xf2, 0x0f, 0x78, 0xc1, 0x04, 0x08}), 6);
  EXPECT_EQ(length_of({0x0f, 0x3a, 0x0f, 0xc1, 0x08}), 5);  // palignr mm imm8
}

TEST(X86Decoder, PrefixesAndRex) {
  Decoded d = run({0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 9);
  EXPECT_EQ(d.insn.prefixes.count, 1);
  EXPECT_EQ(d.insn.prefixes.segment, 0x64);
  EXPECT_TRUE(d.insn.has(attr::kUsesFsGs));
  EXPECT_TRUE(d.insn.has(attr::kSegmentOverride));
  // A REX followed by a legacy prefix is ignored but belongs to the instruction (SDM 2.2.1).
  d = run({0x48, 0x66, 0x90});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 3);
  EXPECT_EQ(d.insn.rex, 0);
  d = run({0x66, 0x48, 0x90});
  EXPECT_EQ(d.insn.rex, 0x48);
  // 40-4F are INC/DEC in 32-bit mode.
  EXPECT_EQ(length_of({0x40}, kAmd32), 1);
  d = run({0xf0, 0x48, 0x0f, 0xb1, 0x0f});  // lock cmpxchg [rdi],rcx
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 5);
  EXPECT_TRUE(d.insn.prefixes.lock);
  EXPECT_TRUE(d.insn.has(attr::kLockPrefix));
  d = run({0xf3, 0xa4});  // rep movsb
  EXPECT_TRUE(d.insn.prefixes.rep);
  EXPECT_TRUE(d.insn.has(attr::kRepPrefix));
  d = run({0xf2, 0xe8, 0, 0, 0, 0});  // bnd call
  EXPECT_TRUE(d.insn.has(attr::kBndPrefix));
  d = run({0xf3, 0x0f, 0x1e, 0xfa});  // endbr64
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 4);
  EXPECT_EQ(d.insn.prefixes.mandatory, 0xf3);
  EXPECT_EQ(d.insn.map, OpcodeMap::Map0F);
  EXPECT_EQ(d.insn.opcode, 0x1e);
  EXPECT_EQ(d.insn.modrm, 0xfa);
  EXPECT_FALSE(d.insn.has(attr::kRepPrefix));
  d = run({0x66, 0xf2, 0x0f, 0x38, 0xf1, 0xc1});  // crc32 ax: F2 is mandatory, 66 sizes it
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 6);
  EXPECT_EQ(d.insn.map, OpcodeMap::Map0F38);
  EXPECT_EQ(d.insn.prefixes.mandatory, 0xf2);
}

// LOCK is #UD on an instruction that does not allow it or without a memory destination
// (SDM vol. 2 LOCK).
TEST(X86Decoder, LockRules) {
  EXPECT_EQ(run({0xf0, 0x01, 0xc0}).status, DecodeStatus::Invalid);
  EXPECT_EQ(run({0xf0, 0x89, 0x07}).status, DecodeStatus::Invalid);  // mov cannot be locked
  EXPECT_EQ(length_of({0xf0, 0x01, 0x07}), 3);
  EXPECT_EQ(length_of({0xf0, 0x83, 0x07, 0x01}), 4);
  EXPECT_EQ(length_of({0xf0, 0x0f, 0xc7, 0x0f}), 4);  // lock cmpxchg8b
}

// SDM vol. 2 2.3.11 / APM vol. 3 1.1: an instruction is at most 15 bytes.
TEST(X86Decoder, FifteenByteLimit) {
  std::vector<uint8_t> bytes(14, 0x66);
  bytes.push_back(0x90);
  EXPECT_EQ(length_of(bytes), 15);
  bytes.insert(bytes.begin(), 0x66);
  EXPECT_EQ(run(bytes).status, DecodeStatus::TooLong);
  // 5 prefixes + movabs (10 bytes) = 15, 6 + 10 = 16.
  std::vector<uint8_t> movabs = {0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(length_of(movabs), 15);
  movabs.insert(movabs.begin(), 0x2e);
  movabs.push_back(9);
  EXPECT_EQ(run(movabs).status, DecodeStatus::TooLong);
  // Never reads past 15 bytes even with a long buffer of prefixes.
  std::vector<uint8_t> prefixes(64, 0xf2);
  X86Insn insn;
  EXPECT_EQ(decode(std::span<const uint8_t>(prefixes), 0, kAmd64, insn), DecodeStatus::TooLong);
  EXPECT_LE(insn.length, 15);
}

TEST(X86Decoder, Truncation) {
  EXPECT_EQ(run({0x48, 0x8d, 0x15, 0xdb, 0xff}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0x0f}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0x0f, 0x38}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0xe8, 0x00, 0x00}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0x66}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0x8b, 0x04}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0xc5, 0xf8}).status, DecodeStatus::Truncated);
  X86Insn insn;
  EXPECT_EQ(decode(std::span<const uint8_t>(), 0, kAmd64, insn), DecodeStatus::Truncated);
}

// SDM vol. 2 appendix A.2.5 / Table A-2 "i64": invalid in 64-bit mode, valid in 32-bit mode.
TEST(X86Decoder, OpcodesInvalidIn64BitMode) {
  const std::vector<std::vector<uint8_t>> encodings = {
      {0x06}, {0x07}, {0x0e}, {0x16}, {0x17}, {0x1e}, {0x1f}, {0x27}, {0x2f}, {0x37}, {0x3f},
      {0x60}, {0x61}, {0x82, 0xc0, 0x01}, {0x9a, 1, 2, 3, 4, 5, 6}, {0xce}, {0xd4, 0x0a},
      {0xd5, 0x0a}, {0xd6}, {0xea, 1, 2, 3, 4, 5, 6}, {0x62, 0x00}, {0xc4, 0x00}, {0xc5, 0x00},
  };
  for (const auto& bytes : encodings) {
    Decoded in32 = run(bytes, kAmd32);
    EXPECT_EQ(in32.status, DecodeStatus::Ok) << "32-bit " << std::hex << int(bytes[0]);
    EXPECT_EQ(in32.insn.length, bytes.size()) << std::hex << int(bytes[0]);
    if (bytes[0] == 0x62 || bytes[0] == 0xc4 || bytes[0] == 0xc5) continue;  // EVEX/VEX in 64-bit mode
    EXPECT_EQ(run(bytes, kAmd64).status, DecodeStatus::Invalid) << "64-bit " << std::hex << int(bytes[0]);
  }
  // o64 (valid in 64-bit mode only): swapgs, rdfsbase.
  EXPECT_EQ(length_of({0x0f, 0x01, 0xf8}), 3);
  EXPECT_EQ(run({0x0f, 0x01, 0xf8}, kAmd32).status, DecodeStatus::Invalid);
  EXPECT_EQ(length_of({0xf3, 0x48, 0x0f, 0xae, 0xc0}), 5);
}

TEST(X86Decoder, UndefinedAndReserved) {
  EXPECT_EQ(run({0x0f, 0x04}).status, DecodeStatus::Invalid);
  EXPECT_EQ(run({0x8d, 0xc0}).status, DecodeStatus::Invalid);        // lea with a register operand
  EXPECT_EQ(run({0x8c, 0xf0}).status, DecodeStatus::Invalid);        // Sreg 6
  EXPECT_EQ(run({0x8e, 0xc8}).status, DecodeStatus::Invalid);        // mov cs,ax
  EXPECT_EQ(run({0x0f, 0x20, 0xc8}).status, DecodeStatus::Invalid);  // cr1
  EXPECT_EQ(length_of({0x44, 0x0f, 0x20, 0xc0}), 4);                 // mov rax,cr8 (REX.R)
  EXPECT_EQ(run({0x44, 0x0f, 0x20, 0xd8}).status, DecodeStatus::Invalid);  // cr11
  EXPECT_EQ(run({0x44, 0x0f, 0x21, 0xc0}).status, DecodeStatus::Invalid);  // dr8
  EXPECT_EQ(run({0xff, 0xf8}).status, DecodeStatus::Invalid);        // FF /7
  EXPECT_EQ(run({0xff, 0xd8}).status, DecodeStatus::Invalid);        // call far with a register
  EXPECT_EQ(run({0xd9, 0xd1}).status, DecodeStatus::Invalid);        // x87 blank cell (SDM Table A-10)
  EXPECT_EQ(run({0xc6, 0xc8, 0x00}).status, DecodeStatus::Invalid);  // C6 /1
}

TEST(X86Decoder, FlowKinds) {
  struct Case {
    std::vector<uint8_t> bytes;
    FlowKind flow;
    uint8_t length;
  };
  const std::vector<Case> cases = {
      {{0xc3}, FlowKind::Ret, 1},
      {{0xc2, 0x10, 0x00}, FlowKind::Ret, 3},
      {{0xff, 0x15, 0x10, 0, 0, 0}, FlowKind::IndirectCall, 6},
      {{0x41, 0xff, 0xd3}, FlowKind::IndirectCall, 3},
      {{0xff, 0xe0}, FlowKind::IndirectJmp, 2},
      {{0x3e, 0xff, 0xe0}, FlowKind::IndirectJmp, 3},  // notrack jmp
      {{0xff, 0x1c, 0x24}, FlowKind::FarTransfer, 3},
      {{0xff, 0x2c, 0x24}, FlowKind::FarTransfer, 3},
      {{0xcb}, FlowKind::FarTransfer, 1},
      {{0xca, 0x08, 0x00}, FlowKind::FarTransfer, 3},
      {{0xcc}, FlowKind::Interrupt, 1},
      {{0xcd, 0x80}, FlowKind::Interrupt, 2},
      {{0xf1}, FlowKind::Interrupt, 1},
      {{0x0f, 0x05}, FlowKind::Syscall, 2},
      {{0x48, 0xcf}, FlowKind::Iret, 2},
      {{0x0f, 0x0b}, FlowKind::Ud, 2},
      {{0x0f, 0xb9, 0x00}, FlowKind::Ud, 3},
      {{0x0f, 0xff, 0x00}, FlowKind::Ud, 3},
      {{0x90}, FlowKind::None, 1},
  };
  for (const auto& c : cases) {
    Decoded d = run(c.bytes);
    ASSERT_EQ(d.status, DecodeStatus::Ok) << std::hex << int(c.bytes[0]);
    EXPECT_EQ(d.insn.flow, c.flow) << std::hex << int(c.bytes[0]);
    EXPECT_EQ(d.insn.length, c.length) << std::hex << int(c.bytes[0]);
  }
  // SYSENTER: Intel only in 64-bit mode (APM vol. 3 SYSENTER: "#UD in long mode").
  Decoded sysenter = run({0x0f, 0x34}, kIntel64);
  ASSERT_EQ(sysenter.status, DecodeStatus::Ok);
  EXPECT_EQ(sysenter.insn.flow, FlowKind::Syscall);
  EXPECT_EQ(run({0x0f, 0x34}, kAmd64).status, DecodeStatus::Invalid);
  EXPECT_EQ(run({0x0f, 0x34}, kAmd32).status, DecodeStatus::Ok);
  EXPECT_TRUE(run({0xc3}).insn.has(attr::kStackImplicit));
  EXPECT_TRUE(run({0xf4}).insn.has(attr::kPrivileged));
  EXPECT_TRUE(run({0xcb}).insn.has(attr::kChangesCodeSegment));
  Decoded xbegin = run({0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00}, kAmd64, 0x1000);  // RTM XBEGIN rel32
  ASSERT_EQ(xbegin.status, DecodeStatus::Ok);
  EXPECT_EQ(xbegin.insn.length, 6);
  EXPECT_TRUE(xbegin.insn.has(attr::kTransactional));
  EXPECT_EQ(xbegin.insn.rel_target, 0x1016u);
  EXPECT_EQ(length_of({0xc6, 0xf8, 0xff}), 3);  // xabort
  EXPECT_TRUE(run({0x0f, 0x01, 0xd5}).insn.has(attr::kTransactional));  // xend
}

TEST(X86Decoder, FlowKindNames) {
  const std::vector<std::pair<FlowKind, std::string>> names = {
      {FlowKind::None, "none"},        {FlowKind::Jmp, "jmp"},           {FlowKind::Jcc, "jcc"},
      {FlowKind::Call, "call"},        {FlowKind::Ret, "ret"},           {FlowKind::Loop, "loop"},
      {FlowKind::IndirectJmp, "ijmp"}, {FlowKind::IndirectCall, "icall"}, {FlowKind::Interrupt, "int"},
      {FlowKind::Syscall, "syscall"},  {FlowKind::Iret, "iret"},         {FlowKind::FarTransfer, "far"},
      {FlowKind::Ud, "ud"},
  };
  for (const auto& [kind, name] : names) EXPECT_EQ(flow_kind_name(kind), name);
}

// SDM vol. 2 2.3.5: C5/C4 are VEX in 64-bit mode, and in 32-bit mode when the next byte has
// mod == 11 (LDS/LES cannot have a register operand).
TEST(X86Decoder, Vex) {
  Decoded d = run({0xc5, 0xf8, 0x77});  // vzeroupper
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 3);
  EXPECT_EQ(d.insn.encoding, Encoding::Vex);
  EXPECT_EQ(d.insn.vex_l, 0);
  EXPECT_FALSE(d.insn.has_modrm);
  d = run({0xc5, 0xfc, 0x77});  // vzeroall
  EXPECT_EQ(d.insn.vex_l, 1);
  d = run({0xc4, 0xe2, 0x7d, 0x18, 0x05, 0, 0, 0, 0});  // vbroadcastss ymm0,[rip]
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 9);
  EXPECT_EQ(d.insn.map, OpcodeMap::Map0F38);
  EXPECT_EQ(d.insn.vex_pp, 1);
  EXPECT_EQ(d.insn.vex_vvvv, 0);
  EXPECT_TRUE(d.insn.rip_relative);
  EXPECT_EQ(d.insn.vex_rxb, 0);
  d = run({0xc4, 0x41, 0x78, 0x28, 0xc1});  // vmovaps xmm8,xmm9: VEX.R and VEX.B set (inverted 0)
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.vex_rxb, 0b101);
  d = run({0xc5, 0x78, 0x28, 0xc1});  // vmovaps xmm8,xmm1: C5 carries R only
  EXPECT_EQ(d.insn.vex_rxb, 0b100);
  d = run({0xc4, 0xe3, 0x71, 0x0f, 0xc2, 0x08});  // vpalignr xmm0,xmm1,xmm2,8
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 6);
  EXPECT_EQ(d.insn.vex_vvvv, 1);
  EXPECT_EQ(d.insn.imm_size, 1);
  EXPECT_EQ(length_of({0xc5, 0xf8, 0x77}, kAmd32), 3);
  EXPECT_EQ(length_of({0xc5, 0x00}, kAmd32), 2);  // lds eax,[eax]
  EXPECT_EQ(run({0x66, 0xc5, 0xf8, 0x77}).status, DecodeStatus::Invalid);  // SDM 2.3.2: 66 before VEX
  EXPECT_EQ(run({0x48, 0xc5, 0xf8, 0x77}).status, DecodeStatus::Invalid);  // REX before VEX
  EXPECT_EQ(run({0xc4, 0xe0, 0x78, 0x10, 0xc0}).status, DecodeStatus::Invalid);  // map 0 reserved
  // VSIB: a gather without a SIB byte is #UD (SDM vol. 2 2.3.12). vpgatherdd xmm0,[rax+xmm1*1],xmm2:
  EXPECT_EQ(length_of({0xc4, 0xe2, 0x69, 0x90, 0x04, 0x08}), 6);
  EXPECT_EQ(run({0xc4, 0xe2, 0x69, 0x90, 0x00}).status, DecodeStatus::Invalid);
  // AMX TILELOADD tmm0,[rax+rcx]: VEX.128.F2.0F38.W0 4B /r, 64-bit only.
  EXPECT_EQ(length_of({0xc4, 0xe2, 0x7b, 0x4b, 0x04, 0x08}), 6);
  EXPECT_EQ(run({0xc4, 0xe2, 0x7b, 0x4b, 0x04, 0x08}, kAmd32).status, DecodeStatus::Invalid);
}

// SDM vol. 2 2.3.6: VEX.vvvv must be 1111b when the instruction has no vvvv operand; VEX.L
// and VEX.W must match the instruction's encoding line (VEX.128 / VEX.L1 / W0 / W1), else #UD.
TEST(X86Decoder, VexFieldRules) {
  EXPECT_EQ(run({0xc5, 0xb8, 0x77}).status, DecodeStatus::Invalid);       // vzeroupper, vvvv = 0111b
  EXPECT_EQ(length_of({0xc5, 0xf9, 0x6e, 0xc0}), 4);                      // vmovd xmm0,eax (VEX.128)
  EXPECT_EQ(run({0xc5, 0xfd, 0x6e, 0xc0}).status, DecodeStatus::Invalid);  // ... with VEX.L = 1
  EXPECT_EQ(run({0xc5, 0xf1, 0x6e, 0xc0}).status, DecodeStatus::Invalid);  // ... with vvvv != 1111b
  EXPECT_EQ(length_of({0xc5, 0xfc, 0x41, 0xc1}), 4);                      // kandw k0,k0,k1 (VEX.L1)
  EXPECT_EQ(run({0xc5, 0xf8, 0x41, 0xc1}).status, DecodeStatus::Invalid);  // ... with VEX.L = 0
  EXPECT_EQ(run({0xc5, 0xbc, 0x41, 0xc1}).status, DecodeStatus::Invalid);  // vvvv = k8 does not exist
  EXPECT_EQ(length_of({0xc4, 0xe3, 0xfd, 0x00, 0xc1, 0x05}), 6);          // vpermq ymm0,ymm1,5 (VEX.256.W1)
  EXPECT_EQ(run({0xc4, 0xe3, 0x7d, 0x00, 0xc1, 0x05}).status, DecodeStatus::Invalid);  // ... with W0
  EXPECT_EQ(length_of({0xc4, 0xe2, 0x7d, 0x58, 0xc1}), 5);                // vpbroadcastd ymm0,xmm1 (W0)
}

// SDM vol. 2 2.7.1: 62 P0 P1 P2 opcode; in 32-bit mode 62 is BOUND unless mod == 11.
TEST(X86Decoder, Evex) {
  Decoded d = run({0x62, 0xf1, 0x7c, 0x48, 0x10, 0x00});  // vmovups zmm0,[rax]
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 6);
  EXPECT_EQ(d.insn.encoding, Encoding::Evex);
  EXPECT_EQ(d.insn.vex_l, 2);
  EXPECT_EQ(d.insn.map, OpcodeMap::Map0F);
  EXPECT_EQ(d.insn.vex_rxb, 0);
  d = run({0x62, 0x61, 0x7c, 0x48, 0x10, 0x00});  // vmovups zmm24,[rax]: EVEX.R and R' set
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.vex_rxb, 0b1100);
  d = run({0x62, 0xf1, 0x7c, 0x48, 0x10, 0x40, 0x01});  // disp8 (compressed, raw value kept)
  EXPECT_EQ(d.insn.length, 7);
  EXPECT_EQ(d.insn.disp, 1);
  d = run({0x62, 0xf3, 0x7d, 0x48, 0x3f, 0xc1, 0x05});  // vpcmpb k0,zmm0,zmm1,5 (imm8)
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 7);
  EXPECT_EQ(run({0x62, 0xf1, 0x7c, 0x48, 0x10, 0x00}, kAmd32).status, DecodeStatus::Ok);
  // EVEX.V' = 0 names registers 16-31, which do not exist in 32-bit mode (SDM vol. 2 2.7.5).
  EXPECT_EQ(run({0x62, 0xf1, 0x7c, 0x40, 0x58, 0xc1}, kAmd32).status, DecodeStatus::Invalid);
  EXPECT_EQ(length_of({0x62, 0xf1, 0x7c, 0x40, 0x58, 0xc1}), 6);  // vaddps zmm0,zmm16,zmm1
  // vmovups has no vvvv operand: EVEX.vvvv must be 1111b and EVEX.V' 1.
  EXPECT_EQ(run({0x62, 0xf1, 0x7c, 0x40, 0x10, 0x00}).status, DecodeStatus::Invalid);
  EXPECT_EQ(run({0x62, 0xf1, 0x74, 0x48, 0x10, 0x00}).status, DecodeStatus::Invalid);
  EXPECT_EQ(length_of({0x62, 0x00}, kAmd32), 2);
  EXPECT_EQ(run({0x62, 0xf1, 0x78, 0x48, 0x10, 0x00}).status, DecodeStatus::Invalid);  // P1 bit 2 clear
  EXPECT_EQ(run({0x62, 0xf4, 0x7c, 0x48, 0x10, 0x00}).status, DecodeStatus::Invalid);  // map 4 reserved
  // AVX512-FP16 map 5: vaddph zmm0,zmm0,zmm1 = EVEX.512.NP.MAP5.W0 58 /r.
  d = run({0x62, 0xf5, 0x7c, 0x48, 0x58, 0xc1});
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.map, OpcodeMap::Evex5);
}

DecodeStatus status_of(std::vector<uint8_t> bytes, const DecoderConfig& config = kAmd64) {
  return run(std::move(bytes), config).status;
}

// Per-instruction EVEX operand rules (SDM vol. 2 2.7, Table 2-36, and each instruction's
// encoding line): each pair is a valid form and the same instruction breaking one rule.
TEST(X86Decoder, EvexOperandRules) {
  // EVEX.b with memory: embedded broadcast, only where the source is m32bcst/m64bcst.
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7c, 0x58, 0x58, 0x00}), DecodeStatus::Ok);  // vaddps zmm0,zmm0,[rax]{1to16}
  EXPECT_EQ(status_of({0x62, 0xe1, 0xfe, 0x38, 0x6f, 0x4f, 0x01}), DecodeStatus::Invalid);  // vmovdqu64 ..{b}
  // EVEX.b in a register form: rounding control (L'L is the rounding mode) or SAE only.
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7c, 0x78, 0x58, 0xc1}), DecodeStatus::Ok);  // vaddps {rz-sae}
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7c, 0x18, 0x5d, 0xc1}), DecodeStatus::Ok);  // vminps {sae}
  EXPECT_EQ(status_of({0x62, 0xf1, 0x25, 0x15, 0xfc, 0xc0}), DecodeStatus::Invalid);  // vpaddb: integer, no rounding
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7e, 0x18, 0xe6, 0xe2}), DecodeStatus::Invalid);  // vcvtdq2pd: exact
  // {z} never with a memory destination; a register destination may be zeroed.
  EXPECT_EQ(status_of({0x62, 0xf1, 0xfe, 0x49, 0x7f, 0x00}), DecodeStatus::Ok);       // vmovdqu64 [rax]{k1},zmm0
  EXPECT_EQ(status_of({0x62, 0xf1, 0xfe, 0xc9, 0x7f, 0x00}), DecodeStatus::Invalid);  // ... {z}
  EXPECT_EQ(status_of({0x62, 0xf1, 0xfe, 0xc9, 0x7f, 0xc8}), DecodeStatus::Ok);       // zmm0{k1}{z},zmm1
  // A mask-register destination: k0-k7 only (no EVEX.R/R'), no {z}.
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7d, 0x48, 0x74, 0xc9}), DecodeStatus::Ok);       // vpcmpeqb k1,zmm0,zmm1
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7d, 0xc9, 0x74, 0xc9}), DecodeStatus::Invalid);  // ... {k1}{z}
  EXPECT_EQ(status_of({0x62, 0x71, 0x7d, 0x48, 0x74, 0xc9}), DecodeStatus::Invalid);  // k9
  // No masking at all: vmovntdq has no {k}.
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7d, 0x08, 0xe7, 0x17}), DecodeStatus::Ok);
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7d, 0x09, 0xe7, 0x17}), DecodeStatus::Invalid);
  // Gathers: a mask other than k0, and the destination differs from the VSIB index.
  EXPECT_EQ(status_of({0x62, 0xf2, 0x7d, 0x49, 0x90, 0x04, 0x88}), DecodeStatus::Ok);  // vpgatherdd zmm0{k1},[rax+zmm1*4]
  EXPECT_EQ(status_of({0x62, 0xf2, 0x7d, 0x48, 0x90, 0x04, 0x88}), DecodeStatus::Invalid);  // k0
  EXPECT_EQ(status_of({0x62, 0xf2, 0x7d, 0x49, 0x90, 0x0c, 0x88}), DecodeStatus::Invalid);  // zmm1{k1},[rax+zmm1*4]
  // EVEX.W: vpaddd is W0; EVEX.L'L: vbroadcastsd has no 128-bit form.
  EXPECT_EQ(status_of({0x62, 0xf1, 0x7d, 0x48, 0xfe, 0xc1}), DecodeStatus::Ok);
  EXPECT_EQ(status_of({0x62, 0xf1, 0xfd, 0x48, 0xfe, 0xc1}), DecodeStatus::Invalid);
  EXPECT_EQ(status_of({0x62, 0xf2, 0xfd, 0x48, 0x19, 0xc1}), DecodeStatus::Ok);
  EXPECT_EQ(status_of({0x62, 0xf2, 0xfd, 0x08, 0x19, 0xc1}), DecodeStatus::Invalid);
  // A general register in ModRM.reg: no EVEX.R' (r16-r31 do not exist).
  EXPECT_EQ(status_of({0x62, 0xf1, 0xfe, 0x08, 0x2d, 0xc1}), DecodeStatus::Ok);       // vcvtss2si rax,xmm1
  EXPECT_EQ(status_of({0x62, 0xe1, 0xfe, 0x08, 0x2d, 0xc1}), DecodeStatus::Invalid);
  // FP16 complex multiply-add: the destination differs from both sources.
  EXPECT_EQ(status_of({0x62, 0xf6, 0x76, 0x48, 0x56, 0xc2}), DecodeStatus::Ok);       // vfmaddcph zmm0,zmm1,zmm2
  EXPECT_EQ(status_of({0x62, 0xf6, 0x76, 0x48, 0x56, 0xc0}), DecodeStatus::Invalid);  // zmm0,zmm1,zmm0
}

// VEX and XOP operand rules beyond vvvv/L (SDM vol. 2 2.3.12 and the instructions' pages).
TEST(X86Decoder, VexAndXopOperandRules) {
  EXPECT_EQ(status_of({0xc5, 0xf5, 0x4b, 0xc2}), DecodeStatus::Ok);        // kunpckbw k0,k1,k2
  EXPECT_EQ(status_of({0xc5, 0x75, 0x4b, 0xc2}), DecodeStatus::Invalid);   // VEX.R: k8
  EXPECT_EQ(status_of({0xc4, 0xe1, 0xf5, 0x4b, 0xc2}), DecodeStatus::Invalid);  // kunpckbw is W0 only
  EXPECT_EQ(status_of({0xc4, 0xe1, 0xf4, 0x4b, 0xc2}), DecodeStatus::Ok);  // kunpckdq (NP W1)
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x79, 0xb1, 0x00}), DecodeStatus::Ok);       // vbcstnesh2ps xmm0,[rax]
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x78, 0xb1, 0x00}), DecodeStatus::Invalid);  // NP B1 does not exist
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x7d, 0x1a, 0x00}), DecodeStatus::Ok);       // vbroadcastf128 ymm0,[rax]
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x7d, 0x1a, 0xc1}), DecodeStatus::Invalid);  // no register source
  // VEX gathers: destination, index and mask are three different registers.
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x69, 0x90, 0x04, 0x88}), DecodeStatus::Ok);       // vpgatherdd xmm0,[rax+xmm1*4],xmm2
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x79, 0x90, 0x04, 0x88}), DecodeStatus::Invalid);  // mask xmm0 = destination
  // AMX: tmm0-tmm7, three different tiles, W0.
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x6b, 0x5e, 0xc1}), DecodeStatus::Ok);       // tdpbssd tmm0,tmm1,tmm2
  EXPECT_EQ(status_of({0xc4, 0xe2, 0x6b, 0x5e, 0xc2}), DecodeStatus::Invalid);  // tmm0,tmm2,tmm2
  EXPECT_EQ(status_of({0xc4, 0xe2, 0xeb, 0x5e, 0xc1}), DecodeStatus::Invalid);  // W1
  EXPECT_EQ(status_of({0xc4, 0x62, 0x6b, 0x5e, 0xc1}), DecodeStatus::Invalid);  // VEX.R: tmm8
  // XOP: vpperm is XOP.128 only (AMD APM vol. 6 VPPERM).
  EXPECT_EQ(status_of({0x8f, 0xe8, 0x78, 0xa3, 0xc1, 0x20}), DecodeStatus::Ok);
  EXPECT_EQ(status_of({0x8f, 0xe8, 0x7c, 0xa3, 0xc1, 0x20}), DecodeStatus::Invalid);
}

// XBEGIN takes rel16 with 66 in 64-bit mode too, for every vendor (SDM vol. 2 XBEGIN: "C7 F8
// XBEGIN rel16" valid in 64-bit mode); the fallback address is RIP + rel16, never truncated to
// 16 bits ("unlike a near jump to a relative offset").
TEST(X86Decoder, XbeginRel16In64BitMode) {
  Decoded d = run({0x66, 0xc7, 0xf8, 0x10, 0x00}, kIntel64);
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 5);
  EXPECT_EQ(d.insn.imm_size, 2);
  EXPECT_EQ(d.insn.rel_target, 0x401000u + 5 + 0x10);
  EXPECT_EQ(length_of({0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00}), 6);
  EXPECT_EQ(length_of({0x66, 0x48, 0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00}), 8);  // REX.W: rel32
  d = run({0x66, 0xc7, 0xf8, 0x10, 0x00}, kAmd32, 0x40fff0);
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.rel_target, 0x40fff0u + 5 + 0x10);
}

// APM vol. 3 1.8: XOP is 8F with map >= 8; POP Ev otherwise.
TEST(X86Decoder, XopAnd3DNowAndX87) {
  Decoded d = run({0x8f, 0xe9, 0x78, 0x81, 0xc0});  // vfrczps xmm0,xmm0
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 5);
  EXPECT_EQ(d.insn.encoding, Encoding::Xop);
  EXPECT_EQ(d.insn.map, OpcodeMap::Xop9);
  EXPECT_EQ(length_of({0x8f, 0xe8, 0x78, 0xc0, 0xc0, 0x05}), 6);               // vprotb imm8
  EXPECT_EQ(length_of({0x8f, 0xea, 0x78, 0x10, 0xc0, 1, 0, 0, 0}), 9);          // bextr imm32
  EXPECT_EQ(length_of({0x8f, 0xc0}), 2);                                        // pop rax
  // 8F with reg != 0 always has map bits >= 8, so it is XOP, never POP /1-/7.
  EXPECT_EQ(run({0x8f, 0xc8}).status, DecodeStatus::Truncated);
  EXPECT_EQ(run({0x8f, 0xe8, 0x79, 0xc0, 0xc0, 0x05}).status, DecodeStatus::Invalid);  // XOP pp must be 00
  // 3DNow!: 0F 0F /r ib, the imm8 is the opcode (APM vol. 3 A.3.3).
  d = run({0x0f, 0x0f, 0xc1, 0xb4});  // pfmul mm0,mm1
  ASSERT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.insn.length, 4);
  EXPECT_EQ(d.insn.map, OpcodeMap::Map3DNow);
  EXPECT_EQ(d.insn.opcode, 0xb4);
  EXPECT_EQ(d.insn.opcode_offset, 3);
  EXPECT_EQ(length_of({0x0f, 0x0f, 0x44, 0x24, 0x08, 0x0d}), 6);  // pi2fd mm0,[rsp+8]
  EXPECT_EQ(run({0x0f, 0x0f, 0xc1, 0x00}).status, DecodeStatus::Invalid);
  // x87
  EXPECT_EQ(length_of({0xd9, 0x7d, 0xfc}), 3);  // fnstcw [rbp-4]
  EXPECT_EQ(length_of({0x9b}), 1);              // fwait is its own instruction
  EXPECT_EQ(length_of({0xdd, 0xd8}), 2);        // fstp st0
  EXPECT_EQ(length_of({0xde, 0xd9}), 2);        // fcompp
  EXPECT_EQ(length_of({0xdb, 0x2c, 0x24}), 3);  // fld tbyte [rsp]
}

TEST(X86Decoder, SystemAndNewerExtensions) {
  EXPECT_EQ(length_of({0x0f, 0x20, 0xc0}), 3);  // mov rax,cr0
  EXPECT_EQ(length_of({0x0f, 0x20, 0x00}), 3);  // the mod field is ignored: still a register
  EXPECT_EQ(length_of({0x0f, 0x01, 0xd0}), 3);  // xgetbv
  EXPECT_EQ(length_of({0x0f, 0x01, 0xc1}), 3);  // vmcall
  EXPECT_EQ(length_of({0x0f, 0x01, 0xd8}), 3);  // vmrun
  EXPECT_EQ(length_of({0x0f, 0xc7, 0x30}), 3);  // vmptrld [rax]
  EXPECT_EQ(length_of({0x66, 0x0f, 0x38, 0xf8, 0x01}), 5);  // movdir64b
  EXPECT_EQ(length_of({0x66, 0x0f, 0x3a, 0xdf, 0xc1, 0x01}), 6);  // aeskeygenassist
  EXPECT_EQ(length_of({0x0f, 0x38, 0xc8, 0xc1}), 4);  // sha1nexte
  EXPECT_EQ(length_of({0x66, 0x0f, 0x3a, 0xce, 0xc1, 0x00}), 6);  // gf2p8affineqb
  EXPECT_EQ(length_of({0xf3, 0x0f, 0xb8, 0xc1}), 4);  // popcnt
  EXPECT_EQ(run({0x0f, 0xb8, 0xc1}).status, DecodeStatus::Invalid);  // JMPE (IA-64 only)
}

// The default vendor is the host's: cpuid's vendor string, here read back from the kernel.
TEST(X86Decoder, HostVendorMatchesProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, vendor;
  while (std::getline(cpuinfo, line))
    if (line.rfind("vendor_id", 0) == 0) {
      vendor = line.substr(line.find(':') + 2);
      break;
    }
  if (vendor.empty()) GTEST_SKIP() << "no vendor_id in /proc/cpuinfo";
  const Vendor expected = (vendor == "AuthenticAMD" || vendor == "HygonGenuine") ? Vendor::Amd : Vendor::Intel;
  EXPECT_EQ(host_vendor(), expected);
  EXPECT_EQ(DecoderConfig{}.vendor, expected);
}

}  // namespace
}  // namespace xprobe::insn::x86
