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

bool ours_invalid_zydis_ok(const Comparison& c) {
  return c.ours == DecodeStatus::Invalid && c.zydis.status == DecodeStatus::Ok;
}

// Knights Corner (Xeon Phi x100) instructions: MVEX (62 with the fixed EVEX P1 bit 2
// clear, SDM vol. 2 §2.7.1 Table 2-30) and KNC's VEX mask branches/ops (jkzd, jknzd, ...).
// #UD on every other processor, unknown to objdump 2.40 ((bad)); Zydis 4.0 decodes them
// even with its KNC mode off (that mode only renames the shared mask instructions).
bool zydis_decodes_knights_corner(const Comparison& c) {
  if (!ours_invalid_zydis_ok(c)) return false;
  const ZydisISAExt ext = c.zydis.insn.meta.isa_ext;
  return c.zydis.insn.encoding == ZYDIS_INSTRUCTION_ENCODING_MVEX || ext == ZYDIS_ISA_EXT_KNC ||
         ext == ZYDIS_ISA_EXT_KNCE || ext == ZYDIS_ISA_EXT_KNCV;
}

// Decodes `bytes` followed by one more byte (each of the 256) and zeros: true when every
// such continuation is Invalid for us. Evidence that refusing early, or reporting
// Truncated where Zydis already says invalid, changes only which refusal is given.
bool every_continuation_invalid(const Comparison& c) {
  std::vector<uint8_t> continued(c.bytes.begin(), c.bytes.end());
  const size_t at = continued.size();
  continued.resize(at + 1 + 15, 0);
  for (unsigned b = 0; b < 256; ++b) {
    continued[at] = static_cast<uint8_t>(b);
    insn::x86::X86Insn insn;
    const DecodeStatus status = insn::x86::decode(continued, 0, c.config, insn);
    if (status != DecodeStatus::Invalid && status != DecodeStatus::TooLong) return false;
  }
  return true;
}

// The input ends, Zydis asks for more bytes, we refuse already because what we have is
// #UD whatever follows: in 64-bit mode a REX/66/F2/F3/F0 prefix before VEX/EVEX (SDM vol. 2
// §2.3.2, §2.7.1), an MVEX introducer (see above), LOCK on an opcode or register form that
// cannot be locked (SDM vol. 2 LOCK), a ModRM naming a register the instruction cannot
// have (MOV Sreg 6/7, MOV to CS, ...), a vector operand rule the bytes up to ModRM/SIB
// already break (the opcode map's W/L/b/z/mask/register rules; Zydis checks some of them
// only once the whole instruction is read). Checked per case: every continuation is Invalid.
bool refused_before_the_end(const Comparison& c) {
  if (c.ours != DecodeStatus::Invalid || c.zydis.status != DecodeStatus::Truncated) return false;
  return c.bytes.size() < 15 && every_continuation_invalid(c);
}

// DB E5 FRSTPM (80287XL only): objdump 2.40 decodes it ("frstpm(287 only)") next to
// FNENI/FNDISI/FNSETPM (DB E0/E1/E4, which Zydis decodes too); Zydis 4.0 does not.
bool x87_frstpm(const Comparison& c) {
  return c.ours == DecodeStatus::Ok && c.zydis.status == DecodeStatus::Invalid &&
         c.shape.encoding == RawEncoding::Legacy && c.shape.map == 0 && c.shape.opcode == 0xdb &&
         c.shape.has_modrm_byte && c.shape.modrm == 0xe5;
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

// XBEGIN with 66 (rel16): the fallback address is RIP + SignExtend(rel16), not truncated
// (SDM vol. 2 XBEGIN: "Use of the 16-bit operand size does not cause this address to be
// truncated to 16 bits, unlike a near jump to a relative offset"). Zydis truncates it.
bool xbegin_rel16_target(const Comparison& c) {
  const RawShape& s = c.shape;
  if (c.ours != DecodeStatus::Ok || c.zydis.status != DecodeStatus::Ok || c.insn.length != c.zydis.length) return false;
  if (c.field_mismatch() != "rel-target" || s.encoding != RawEncoding::Legacy || s.map != 0 || s.opcode != 0xc7)
    return false;
  if (!s.has_modrm_byte || s.modrm != 0xf8 || c.insn.imm_size != 2) return false;
  uint64_t full = c.insn.address + c.insn.length + static_cast<uint64_t>(c.insn.imm);
  if (c.config.mode == Mode::Protected32) full &= 0xffffffff;
  return c.insn.rel_target == full;
}

// Both refuse: the instruction is (or would be, with the input cut short) longer than 15
// bytes and is also undefined. The SDM puts
// both in one priority class ("faults from decoding the next instruction": instruction
// length > 15 bytes, invalid opcode; vol. 3 §6.9, Table 6-2), so either answer is the
// processor's.
bool too_long_and_invalid(const Comparison& c) {
  const bool a = c.ours == DecodeStatus::TooLong && c.zydis.status == DecodeStatus::Invalid;
  const bool b = c.ours == DecodeStatus::Invalid && c.zydis.status == DecodeStatus::TooLong;
  // The input ends and what is there can only become longer than 15 bytes (e.g. 12 prefixes
  // and an EVEX introducer): we say TooLong, Zydis wants more bytes. Every continuation checked.
  const bool cut = c.ours == DecodeStatus::TooLong && c.zydis.status == DecodeStatus::Truncated &&
                   c.bytes.size() < 15 && every_continuation_invalid(c);
  return a || b || cut;
}

// The input ends where Zydis already refuses (an opcode invalid in the mode, a VEX/EVEX/XOP
// payload no opcode can follow, ...) and we report Truncated: both refuse. Checked: every
// continuation is Invalid for us, so an acceptance bug cannot hide here.
bool truncated_where_zydis_refuses(const Comparison& c) {
  if (c.ours != DecodeStatus::Truncated || c.zydis.status != DecodeStatus::Invalid) return false;
  return c.bytes.size() < 15 && every_continuation_invalid(c);
}

// SYSENTER and SYSEXIT are #UD in long mode on AMD processors (APM vol. 3, SYSENTER and
// SYSEXIT: "#UD ... in long mode"); Intel allows them. Zydis has no vendor for this.
bool amd_long_mode_sysenter(const Comparison& c) {
  if (!ours_invalid_zydis_ok(c) || c.config.mode != Mode::Long64 || c.config.vendor != Vendor::Amd) return false;
  return c.shape.encoding == RawEncoding::Legacy && c.shape.map == 1 &&
         (c.shape.opcode == 0x34 || c.shape.opcode == 0x35);
}

// MPX (0F 1A/1B) naming BND4-BND15, or with 16-bit addressing (67 in 32-bit mode): #UD only
// "when Intel MPX is enabled" (SDM vol. 2 BNDCL, BNDMK, BNDMOV, BNDLDX, BNDSTX: #UD "If ModRM.r/m
// encodes BND4-BND7 when Intel MPX is enabled", "If 67H prefix is used and CS.D=1"); otherwise,
// on every current processor, these are hint NOPs of the same length. objdump 2.40 decodes
// them ("bndstx (bad),...", "addr16 bndldx (bad),...").
bool mpx_high_bound_register(const Comparison& c) {
  if (c.ours != DecodeStatus::Ok) return false;
  if (c.shape.encoding != RawEncoding::Legacy || c.shape.map != 1 || (c.shape.opcode != 0x1a && c.shape.opcode != 0x1b))
    return false;
  if (c.zydis.zydis_status == ZYDIS_STATUS_BAD_REGISTER) return true;
  if (c.zydis.zydis_status != ZYDIS_STATUS_DECODING_ERROR || !c.shape.has_modrm_byte) return false;
  // 32-bit mode: BND4-BND7 by ModRM.reg alone, and 16-bit addressing; Zydis reports a decoding error.
  if (c.config.mode != Mode::Protected32) return false;
  return c.shape.modrm_reg() >= 4 || (c.shape.has_67 && !c.shape.modrm_is_register());
}

// Extensions objdump 2.40 (binutils, January 2023) decodes and Zydis 4.0 (November 2022)
// does not, each matched on its exact encoding (map, opcode, pp, W, memory/register form)
// from the SDM / ISA Extensions Reference (319433-047):
//   AVX-IFMA        VEX.66.0F38.W1 B4/B5
//   AVX-VNNI-INT8   VEX.{NP,F3,F2}.0F38.W0 50/51
//   AVX-NE-CONVERT  VEX.F3.0F38.W0 72 /r; VEX.{NP,66,F3,F2}.0F38.W0 B0 m; VEX.{66,F3}.0F38.W0 B1 m
//   AMX-FP16        VEX.128.F2.0F38.W0 5C 11:rrr:bbb (64-bit mode)
//   CMPccXADD       VEX.128.66.0F38 E0-EF m (64-bit mode)
//   RAO-INT         {NP,66,F2,F3} 0F 38 FC m
//   WRMSRNS/MSRLIST {NP,F2,F3} 0F 01 C6
bool newer_than_zydis_4_0(const Comparison& c) {
  // Cut inputs too: we wait for the rest of the instruction, Zydis does not know the opcode.
  const bool cut = c.ours == DecodeStatus::Truncated;
  if ((c.ours != DecodeStatus::Ok && !cut) || c.zydis.zydis_status != ZYDIS_STATUS_DECODING_ERROR) return false;
  const RawShape& s = c.shape;
  if (!s.has_opcode || (!s.has_modrm_byte && !cut)) return false;
  // Without the ModRM byte (cut right after the opcode) either form may follow.
  const bool mem = s.has_modrm_byte ? !s.modrm_is_register() : true;
  const bool vex = s.encoding == RawEncoding::Vex2 || s.encoding == RawEncoding::Vex3;
  const bool long64 = c.config.mode == Mode::Long64;
  if (vex && s.map == 2) {
    const uint8_t op = s.opcode;
    if ((op == 0xb4 || op == 0xb5) && s.pp == 1 && s.w) return true;
    if ((op == 0x50 || op == 0x51) && s.pp != 1 && !s.w) return true;
    if (op == 0x72 && s.pp == 2 && !s.w) return true;
    if (op == 0xb0 && mem && !s.w) return true;
    if (op == 0xb1 && mem && (s.pp == 1 || s.pp == 2) && !s.w) return true;
    if (op == 0x5c && long64 && s.pp == 3 && !s.w && s.l == 0 && !mem) return true;
    if (op >= 0xe0 && op <= 0xef && long64 && s.pp == 1 && s.l == 0 && mem) return true;
    return false;
  }
  if (s.encoding != RawEncoding::Legacy) return false;
  if (s.map == 2 && s.opcode == 0xfc && mem) return true;
  return s.map == 1 && s.opcode == 0x01 && s.modrm == 0xc6 && s.mandatory_prefix() != 0x66;
}

// Prefixes an instruction does not use, where we follow objdump 2.40's decoding and the
// SDM calls the use reserved (vol. 2 §2.1.1: 66/F2/F3 with instructions that do not take
// them "is reserved and may cause unpredictable behavior"), and Zydis decides otherwise:
//   66/F2/F3 0F 37 GETSEC      objdump "data16/repnz/repz getsec"  we decode, Zydis refuses
//   66 0F AE /0-/5 memory      objdump "data16 fxsave ..."         we decode, Zydis refuses
//   66/F2 0F 09 WBINVD         objdump (bad)                       we refuse, Zydis decodes
//   66 0F 01 FD RDPRU          objdump (bad)                       we refuse, Zydis decodes
//   F2 0F 01 FD, F3 (32-bit)   objdump (bad)                       we refuse, Zydis decodes RDPRU
// and 0F 0D with mod=11 (PREFETCH group on a register: AMD APM vol. 3 PREFETCH, #UD "the
// operand was a register"; objdump "prefetch (bad)"): we refuse, Zydis decodes a NOP.
bool reserved_prefix_as_objdump(const Comparison& c) {
  const RawShape& s = c.shape;
  if (s.encoding != RawEncoding::Legacy || s.map != 1 || !s.has_opcode) return false;
  const uint8_t pfx = s.mandatory_prefix();
  // A cut input we would decode (Truncated) counts as decoding.
  const bool we_decode =
      (c.ours == DecodeStatus::Ok || c.ours == DecodeStatus::Truncated) && c.zydis.status == DecodeStatus::Invalid;
  const bool we_refuse = ours_invalid_zydis_ok(c);
  if (s.opcode == 0x37) return we_decode && pfx != 0;
  if (s.opcode == 0xae)
    return we_decode && pfx == 0x66 && s.has_modrm_byte && !s.modrm_is_register() && s.modrm_reg() <= 5;
  if (s.opcode == 0x09) return we_refuse && (pfx == 0x66 || pfx == 0xf2);
  if (s.opcode == 0x0d) return we_refuse && s.has_modrm_byte && s.modrm_is_register();
  if (s.opcode == 0x01 && s.has_modrm_byte && s.modrm == 0xfd) {
    if (pfx == 0x66) return we_refuse;  // 66 RDPRU
    // F2 0F 01 FD (undefined) and, outside 64-bit mode, F3 0F 01 FD (RMPQUERY is 64-bit only,
    // AMD APM vol. 3): objdump 2.40 prints (bad), Zydis decodes RDPRU with an ignored prefix.
    return we_refuse && (pfx == 0xf2 || (pfx == 0xf3 && c.config.mode == Mode::Protected32));
  }
  return false;
}

// VIA PadLock without its REP prefix: 0F A6 C0/C8/D0 (montmul, xsha1, xsha256) and
// 0F A7 C8-E8 (xcrypt-ecb/cbc/ctr/cfb/ofb). objdump 2.40 decodes them with or without F3,
// same length; Zydis 4.0 only with F3 (xstore, 0F A7 C0, it takes with F3 or without a
// prefix, not with F2, which objdump decodes as "repnz xstore-rng").
bool padlock_without_rep(const Comparison& c) {
  const RawShape& s = c.shape;
  if (c.ours != DecodeStatus::Ok || c.zydis.status != DecodeStatus::Invalid) return false;
  if (s.encoding != RawEncoding::Legacy || s.map != 1 || !s.has_modrm_byte) return false;
  if (s.opcode == 0xa7 && s.modrm == 0xc0) return s.last_f2_f3 == 0xf2;
  if (s.has_f3) return false;
  if (s.opcode == 0xa6) return s.modrm == 0xc0 || s.modrm == 0xc8 || s.modrm == 0xd0;
  if (s.opcode == 0xa7) return s.modrm >= 0xc8 && s.modrm <= 0xe8 && (s.modrm & 7) == 0;
  return false;
}

// EVEX.b = 1 in the register form of VCVTDQ2PD (EVEX.F3.0F.W0 E6) and VCVTUDQ2PD
// (EVEX.F3.0F.W0 7A): these conversions are exact, their encodings carry neither {er} nor
// {sae} ("VCVTDQ2PD zmm1 {k1}{z}, ymm2/m256/m32bcst"), and SDM vol. 2 §2.7.11 Table 2-36 says
// EVEX.b must then be 0, otherwise #UD. objdump 2.40 marks the operand "{rn-bad}"; Zydis 4.0
// accepts it.
//
// Likewise VCVTSI2SD and VCVTUSI2SD from a 32-bit source (EVEX.F2.0F.W0 2A / 7B: "xmm2,
// r/m32", no {er}; their W1 forms from r/m64 have {er}, but outside 64-bit mode W1 is
// ignored and they are the W0 forms). objdump 2.40: {rn-bad}; Zydis ignores EVEX.b there.
bool evex_b_on_exact_conversion(const Comparison& c) {
  const RawShape& s = c.shape;
  if (!ours_invalid_zydis_ok(c) || s.encoding != RawEncoding::Evex || s.map != 1) return false;
  if (!s.has_modrm_byte || !s.modrm_is_register()) return false;
  const bool packed = s.pp == 2 && !s.w && (s.opcode == 0xe6 || s.opcode == 0x7a);
  const bool scalar = s.pp == 3 && (!s.w || c.config.mode == Mode::Protected32) && (s.opcode == 0x2a || s.opcode == 0x7b);
  if (!packed && !scalar) return false;
  const uint8_t p2 = c.bytes[s.opcode_offset - 1];
  return (p2 & 0x10) != 0;
}

// AVX512-FP16 conversions between a general register and a half-precision scalar with
// EVEX.W1 (r/m64 / r64) outside 64-bit mode: VCVTSI2SH, VCVTUSI2SH (EVEX.F3.MAP5 2A, 7B),
// VCVTSH2SI, VCVTTSH2SI, VCVTSH2USI, VCVTTSH2USI (2D, 2C, 79, 78). We decode them as the W0
// form, as the SDM says of the same conversions in map 1 (VCVTSI2SS... "EVEX.W1 in non-64
// bit is ignored; the instructions behaves as if the W0 version is used") and as objdump
// 2.40 decodes them; Zydis 4.0 refuses. Same length either way.
bool fp16_gpr_conversion_w1_outside_64(const Comparison& c) {
  const RawShape& s = c.shape;
  if (c.ours != DecodeStatus::Ok || c.zydis.zydis_status != ZYDIS_STATUS_DECODING_ERROR) return false;
  if (c.config.mode != Mode::Protected32 || s.encoding != RawEncoding::Evex || s.map != 5 || s.pp != 2 || !s.w)
    return false;
  switch (s.opcode) {
    case 0x2a: case 0x2c: case 0x2d: case 0x78: case 0x79: case 0x7b: return true;
    default: return false;
  }
}

}  // namespace

const std::vector<ExpectedException>& expected_exceptions() {
  static const std::vector<ExpectedException> exceptions = {
      {"Knights Corner (MVEX, KNC VEX mask ops): Zydis decodes them, objdump 2.40 and non-Phi CPUs do not",
       "SDM vol. 2 §2.7.1 Table 2-30 (EVEX P1[2] = 1); objdump 2.40: (bad)", zydis_decodes_knights_corner, Mode::Long64,
       Vendor::Intel, "62 f3 79 20 1f 47 05 00 62 cc aa f8 77 10 1d 8b"},
      {"input ends; we already refuse (prefix before VEX/EVEX, MVEX, unlockable LOCK, bad ModRM register, vector "
       "operand rule), Zydis wants more",
       "SDM vol. 2 §2.3.2, §2.7.1, LOCK; every continuation checked Invalid", refused_before_the_end, Mode::Long64,
       Vendor::Amd, "49 c5"},
      {"x87 reserved register-form aliases FSTP1/FCOM2/FCOMP3/FXCH4/FCOMP5/FXCH7/FSTP8/FSTP9",
       "SDM vol. 2 A.5 Tables A-8..A-22 (blank cells); objdump 2.40: (bad)", x87_reserved_alias, Mode::Protected32,
       Vendor::Intel, "df d7 74 c7 f3 ec 8f c1 1d 59 f4 d5 56 21 a9 e3"},
      {"AMD, 64-bit mode, 66 + rel8 branch: target truncated to 16 bits (Zydis keeps 64)",
       "AMD APM vol. 1 §3.7.9 Table 3-9", amd_rel8_branch_16bit_target, Mode::Long64, Vendor::Amd,
       "66 74 08 b9 de a6 23 8a 29 08 21 c4 00 00 00 00"},
      {"XBEGIN rel16: fallback address not truncated to 16 bits (Zydis truncates it)",
       "SDM vol. 2 XBEGIN (description and operation)", xbegin_rel16_target, Mode::Long64, Vendor::Intel,
       "66 c7 f8 c8 0e 39 c1 0c d8 be 3e 25 e0 46 f1 de"},
      {"longer than 15 bytes and undefined (or cut where it cannot fit): TooLong vs Invalid/Truncated",
       "SDM vol. 3 §6.9 Table 6-2 (same priority class)",
       too_long_and_invalid, Mode::Protected32, Vendor::Amd,
       "67 2e f0 26 f0 3e 2e f0 26 f2 67 c7 85 7c fb ff ff 01 00 00 00"},
      {"input ends where Zydis already refuses; we say Truncated", "both refuse; every continuation checked Invalid",
       truncated_where_zydis_refuses, Mode::Protected32, Vendor::Amd, "c4 c3 04"},
      {"AMD: SYSENTER/SYSEXIT in long mode", "AMD APM vol. 3 SYSENTER, SYSEXIT (#UD in long mode)",
       amd_long_mode_sysenter, Mode::Long64, Vendor::Amd, "4a 0f 34 87 e9 7d c8 f5 60 21 b2 ce 9d 68 36 42"},
      {"MPX 0F 1A/1B naming BND4-BND15 or with 16-bit addressing: hint NOP unless MPX is enabled",
       "SDM vol. 2 BNDCL/BNDMK/BNDMOV/BNDLDX/BNDSTX #UD conditions; objdump 2.40 decodes them",
       mpx_high_bound_register, Mode::Protected32, Vendor::Amd, "0f 1b 71 fc ff ff e7 88 59 8e f4 ac 7d 35 22 07"},
      {"extensions objdump 2.40 knows and Zydis 4.0 does not (AVX-IFMA, AVX-VNNI-INT8, AVX-NE-CONVERT, AMX-FP16, "
       "CMPccXADD, RAO-INT, WRMSRNS, MSRLIST)",
       "ISA Extensions Reference 319433-047 encodings; objdump 2.40 decodes them", newer_than_zydis_4_0, Mode::Long64,
       Vendor::Intel, "c4 e2 c1 b4 79 0b 90 90 90 90 90 90 90 90 90 90"},
      {"unused 66/F2/F3 prefixes decoded as objdump 2.40 does (GETSEC, FXSAVE group, WBINVD), 0F 0D register form",
       "SDM vol. 2 §2.1.1 (reserved prefix use); AMD APM vol. 3 PREFETCH; objdump 2.40", reserved_prefix_as_objdump,
       Mode::Long64, Vendor::Intel, "66 0f 37 b9 0c c6 16 62 66 bb c4 54 31 c3 a4 7f"},
      {"x87 DB E5 FRSTPM (287XL only)", "objdump 2.40 decodes it (ISA coverage goal); Zydis 4.0 does not", x87_frstpm,
       Mode::Long64, Vendor::Intel, "48 db e5 6e 1c 35 85 78 e0 5b 92 67 a7 b4 9d 65"},
      {"VIA PadLock (montmul, xsha*, xcrypt-*) without REP, xstore with F2",
       "objdump 2.40 decodes them without F3 (xstore with F2); Zydis 4.0 needs F3",
       padlock_without_rep, Mode::Long64, Vendor::Intel, "0f a6 c0 8a e1 c2 f9 f2 a3 d0 28 cd cc 5d 9a 2f"},
      {"EVEX.b in the register form of exact conversions (VCVT[U]DQ2PD, VCVT[U]SI2SD from r/m32)",
       "SDM vol. 2 §2.7.11 Table 2-36 (EVEX.b must be 0 otherwise #UD); objdump 2.40: {rn-bad}",
       evex_b_on_exact_conversion, Mode::Protected32, Vendor::Amd, "62 f1 7e f9 e6 e2 3b a4 09 bb 1d b6 4f 38 5e 38"},
      {"AVX512-FP16 GPR conversions with EVEX.W1 outside 64-bit mode: decoded as W0",
       "SDM vol. 2 VCVTSI2SS/VCVTSI2SD note (W1 ignored outside 64-bit mode); objdump 2.40 decodes them",
       fp16_gpr_conversion_w1_outside_64, Mode::Protected32, Vendor::Amd, "62 d5 8e 28 7b 1d 6e a2 ae b2 5b 07 d1 3d 35 d7"},
  };
  return exceptions;
}

}  // namespace xprobe::test::x86
