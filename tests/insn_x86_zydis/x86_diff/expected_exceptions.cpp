// Disagreement classes with Zydis 4.0 where xprobe's decoder is right (it follows the
// processor as the Intel SDM / AMD APM describe it, within objdump 2.40's ISA coverage).
// Each entry matches one narrow opcode class on the raw bytes, so that a new bug elsewhere
// cannot hide behind it; each carries one example the test replays.
#include <vector>

#include "x86_diff/differential.h"

namespace xprobe::test::x86 {

namespace {

using insn::x86::DecodeStatus;
using insn::x86::Mode;
using insn::x86::Vendor;

// Index of the first byte after the legacy prefixes and REX (the opcode or the VEX/EVEX/XOP
// introducer).
size_t first_non_prefix(const Comparison& c) {
  size_t i = 0;
  while (i < c.bytes.size() &&
         (is_legacy_prefix(c.bytes[i]) || (c.config.mode == Mode::Long64 && (c.bytes[i] & 0xf0) == 0x40)))
    ++i;
  return i;
}

bool ours_invalid_zydis_ok(const Comparison& c) {
  return c.ours == DecodeStatus::Invalid && c.zydis.status == DecodeStatus::Ok;
}

// EVEX P1 bit 2 is a fixed 1 (SDM vol. 2 §2.7.1, Table 2-30); with it clear, 62 is Knights
// Corner's MVEX, which only the Xeon Phi x100 decodes (#UD everywhere else) and objdump
// 2.40 does not know ((bad)). Zydis 4.0 decodes MVEX even with its KNC mode off.
bool knights_corner_mvex(const Comparison& c) {
  if (!ours_invalid_zydis_ok(c) || c.config.mode != Mode::Long64) return false;
  if (c.zydis.insn.encoding != ZYDIS_INSTRUCTION_ENCODING_MVEX) return false;
  const size_t at = first_non_prefix(c);
  return at + 2 < c.bytes.size() && c.bytes[at] == 0x62 && (c.bytes[at + 2] & 0x04) == 0;
}

// In 64-bit mode C4/C5/62 always introduce VEX/EVEX, and a REX, 66, F2, F3 or F0 prefix
// before them makes the instruction #UD whatever follows (SDM vol. 2 §2.3.2, §2.7.1):
// we refuse as soon as we see it, Zydis first asks for the rest of the bytes.
bool prefixed_vex_cut_short(const Comparison& c) {
  if (c.config.mode != Mode::Long64 || c.ours != DecodeStatus::Invalid) return false;
  if (c.zydis.status != DecodeStatus::Truncated) return false;
  const size_t at = first_non_prefix(c);
  if (at >= c.bytes.size()) return false;
  const uint8_t introducer = c.bytes[at];
  if (introducer != 0xc4 && introducer != 0xc5 && introducer != 0x62) return false;
  return c.shape.rex != 0 || c.shape.has_66 || c.shape.has_f2 || c.shape.has_f3 || c.shape.has_f0 ||
         (at > 0 && (c.bytes[at - 1] & 0xf0) == 0x40);
}

// x87 register forms that the SDM's x87 opcode maps (vol. 2 A.5, Tables) leave
// blank and objdump 2.40 prints as (bad): the undocumented aliases FSTP1 (D9 D8-DF),
// FCOM2 (DC D0-D7), FCOMP3 (DC D8-DF), FXCH4 (DD C8-CF), FCOMP5 (DE D0-D7), FXCH7
// (DF C8-CF), FSTP8 (DF D0-D7), FSTP9 (DF D8-DF). Zydis decodes them.
bool x87_reserved_alias(const Comparison& c) {
  if (!ours_invalid_zydis_ok(c) || c.shape.encoding != RawEncoding::Legacy || c.shape.map != 0) return false;
  if (!c.shape.has_modrm_byte || !c.shape.modrm_is_register()) return false;
  const unsigned reg = c.shape.modrm_reg();
  switch (c.shape.opcode) {
    case 0xd9: return reg == 3;
    case 0xdc: return reg == 2 || reg == 3;
    case 0xdd: return reg == 1;
    case 0xde: return reg == 2;
    case 0xdf: return reg == 1 || reg == 2 || reg == 3;
    default: return false;
  }
}

// On AMD a 66 prefix gives every near relative branch in 64-bit mode a 16-bit operand size,
// the rel8 forms included, and the new rIP is truncated to 16 bits (AMD APM vol. 1 §3.7.9,
// Table 3-9: Jcc 70-7F, JMP EB, LOOPcc E0-E2, JrCXZ E3 "possible override 16"). Zydis's
// AMD_BRANCHES mode applies that to the rel16/32 forms only, so it computes a 64-bit target.
bool amd_rel8_branch_16bit_target(const Comparison& c) {
  if (c.config.mode != Mode::Long64 || c.config.vendor != Vendor::Amd) return false;
  if (c.ours != DecodeStatus::Ok || c.zydis.status != DecodeStatus::Ok || c.insn.length != c.zydis.length) return false;
  if (c.field_mismatch() != "rel-target") return false;
  if (!c.shape.has_66 || (c.shape.rex & 0x08) != 0 || c.shape.encoding != RawEncoding::Legacy || c.shape.map != 0)
    return false;
  const uint8_t op = c.shape.opcode;
  if (!((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3))) return false;
  const uint64_t full = c.insn.address + c.zydis.length + static_cast<uint64_t>(c.zydis.insn.raw.imm[0].value.s);
  return c.insn.rel_target == (full & 0xffff);
}

// Both refuse: the instruction is longer than 15 bytes and is also undefined. The SDM puts
// both in one priority class ("faults from decoding the next instruction": instruction
// length > 15 bytes, invalid opcode; vol. 3 §6.9, Table 6-2), so either answer is the
// processor's.
bool too_long_and_invalid(const Comparison& c) {
  const bool a = c.ours == DecodeStatus::TooLong && c.zydis.status == DecodeStatus::Invalid;
  const bool b = c.ours == DecodeStatus::Invalid && c.zydis.status == DecodeStatus::TooLong;
  return (a || b) && c.bytes.size() > 15;
}

// The input ends inside a VEX/EVEX/XOP prefix or right after it, and no opcode byte could
// make it an instruction: Zydis refuses from the payload alone, we ask for more bytes.
// Both refuse; the predicate proves ours would refuse every completion (all 256 opcode
// bytes), so that a real acceptance bug cannot hide here.
bool vector_payload_cut_short(const Comparison& c) {
  if (c.ours != DecodeStatus::Truncated || c.zydis.status != DecodeStatus::Invalid) return false;
  if (c.shape.encoding == RawEncoding::Legacy || c.shape.encoding == RawEncoding::ThreeDNow) return false;
  // Only "payload complete, opcode byte missing"; a ModRM and an imm8 of zeros complete it.
  if (c.shape.has_opcode || c.bytes.size() != c.shape.opcode_offset) return false;
  std::vector<uint8_t> completed(c.bytes.begin(), c.bytes.end());
  completed.resize(c.bytes.size() + 8, 0);
  for (unsigned opcode = 0; opcode < 256; ++opcode) {
    completed[c.shape.opcode_offset] = static_cast<uint8_t>(opcode);
    insn::x86::X86Insn insn;
    if (insn::x86::decode(completed, 0, c.config, insn) != DecodeStatus::Invalid) return false;
  }
  return true;
}

}  // namespace

const std::vector<ExpectedException>& expected_exceptions() {
  static const std::vector<ExpectedException> exceptions = {
      {"Knights Corner MVEX (62 with P1 bit 2 clear): Zydis decodes it, objdump 2.40 and non-Phi CPUs do not",
       "SDM vol. 2 §2.7.1 Table 2-30 (EVEX P1[2] = 1); objdump 2.40: (bad)", knights_corner_mvex, Mode::Long64,
       Vendor::Intel, "62 f3 79 20 1f 47 05 00 62 cc aa f8 77 10 1d 8b"},
      {"REX/66/F2/F3/F0 before VEX/EVEX, input ends (we refuse at once, Zydis wants more bytes)",
       "SDM vol. 2 §2.3.2 and §2.7.1: such a prefix before VEX/EVEX is #UD", prefixed_vex_cut_short, Mode::Long64,
       Vendor::Amd, "49 c5"},
      {"x87 reserved register-form aliases FSTP1/FCOM2/FCOMP3/FXCH4/FCOMP5/FXCH7/FSTP8/FSTP9",
       "SDM vol. 2 A.5 Tables A-8..A-22 (blank cells); objdump 2.40: (bad)", x87_reserved_alias, Mode::Protected32,
       Vendor::Intel, "df d7 74 c7 f3 ec 8f c1 1d 59 f4 d5 56 21 a9 e3"},
      {"AMD, 64-bit mode, 66 + rel8 branch: target truncated to 16 bits (Zydis keeps 64)",
       "AMD APM vol. 1 §3.7.9 Table 3-9", amd_rel8_branch_16bit_target, Mode::Long64, Vendor::Amd,
       "66 74 08 b9 de a6 23 8a 29 08 21 c4 00 00 00 00"},
      {"longer than 15 bytes and undefined: TooLong vs Invalid", "SDM vol. 3 §6.9 Table 6-2 (same priority class)",
       too_long_and_invalid, Mode::Protected32, Vendor::Amd,
       "67 2e f0 26 f0 3e 2e f0 26 f2 67 c7 85 7c fb ff ff 01 00 00 00"},
      {"VEX/EVEX/XOP payload complete, opcode byte missing, no opcode could make it valid: Truncated vs invalid",
       "both refuse; every completion is Invalid for us (checked)", vector_payload_cut_short, Mode::Protected32,
       Vendor::Amd, "c4 c3 04"},
  };
  return exceptions;
}

}  // namespace xprobe::test::x86
