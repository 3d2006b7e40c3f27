// Table-driven x86 length/field decoder. The structure follows the instruction format of
// the Intel SDM vol. 2 chapter 2 (and AMD APM vol. 3 chapter 1): legacy prefixes, REX,
// VEX/EVEX/XOP, opcode (1-3 bytes), ModRM, SIB, displacement, immediate. What each opcode
// takes comes from the generated tables (opcode_map.txt); this file only knows the format.
#include <cstring>

#include "insn/x86/decoder.h"
#include "insn/x86/x86_tables.h"

namespace xprobe::insn::x86 {
namespace {

using tables::Entry;

constexpr unsigned kMaxLength = 15;  // SDM vol. 2 2.3.11, APM vol. 3 1.1: longer is #GP/#UD

// Prefix classes for the prefix scan (SDM vol. 2 2.1.1).
enum PrefixClass : uint8_t { kNotPrefix, kSegment, kOpSize, kAddrSize, kLock, kRepne, kRep, kRex };

constexpr auto make_prefix_classes() {
  struct Table {
    uint8_t c[256];
  } t{};
  for (int b : {0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65}) t.c[b] = kSegment;
  t.c[0x66] = kOpSize;
  t.c[0x67] = kAddrSize;
  t.c[0xf0] = kLock;
  t.c[0xf2] = kRepne;
  t.c[0xf3] = kRep;
  for (int b = 0x40; b <= 0x4f; ++b) t.c[b] = kRex;  // REX only in 64-bit mode (checked below)
  return t;
}
constexpr auto kPrefixClasses = make_prefix_classes();

__attribute__((always_inline)) inline uint64_t load_le(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1: return p[0];
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case 8: { uint64_t v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

inline int64_t sign_extend(uint64_t value, unsigned size) {
  switch (size) {
    case 1: return static_cast<int8_t>(value);
    case 2: return static_cast<int16_t>(value);
    case 4: return static_cast<int32_t>(value);
    default: return static_cast<int64_t>(value);
  }
}

// Index of an EVEX map (mmm field) in tables::kEvex, or -1 when reserved.
constexpr int evex_map_index(unsigned mmm) {
  switch (mmm) {
    case 1: return 0;
    case 2: return 1;
    case 3: return 2;
    case 5: return 3;
    case 6: return 4;
    default: return -1;
  }
}

class Decoder {
 public:
  Decoder(std::span<const uint8_t> bytes, const DecoderConfig& config, X86Insn& out)
      : p_(bytes.data()),
        avail_(bytes.size() < kMaxLength ? static_cast<unsigned>(bytes.size()) : kMaxLength),
        is64_(config.mode == Mode::Long64),
        amd_(config.vendor == Vendor::Amd),
        mode_invalid_mask_(static_cast<uint8_t>(
            is64_ ? tables::kInvalidIn64 | (amd_ ? tables::kInvalidIn64OnAmd : 0) : tables::kInvalidIn32)),
        out_(out) {}

  DecodeStatus run(uint64_t address);

 private:
  // Makes sure n more bytes from position i_ exist.
  bool need(unsigned n) {
    if (i_ + n <= avail_) return true;
    status_ = i_ + n > kMaxLength ? DecodeStatus::TooLong : DecodeStatus::Truncated;
    out_.length = static_cast<uint8_t>(avail_);
    return false;
  }
  DecodeStatus invalid() {
    out_.length = static_cast<uint8_t>(i_ < avail_ ? i_ + 1 : avail_);
    return DecodeStatus::Invalid;
  }
  unsigned column() const {
    // SDM vol. 2 2.1.2 / 3.1.1.2: F2/F3 take precedence over 66 as the mandatory prefix;
    // between F2 and F3 the last one counts, as the processor does.
    if (last_rep_ != 0) return last_rep_ == 0xf3 ? 2 : 3;
    return out_.prefixes.operand_size ? 1 : 0;
  }
  bool operand_size_16() const { return out_.prefixes.operand_size && (out_.rex & 0x08) == 0; }
  __attribute__((always_inline)) DecodeStatus decode_modrm_and_rest(tables::Entry entry);
  uint32_t prefix_attributes(tables::Entry entry, FlowKind flow);
  __attribute__((always_inline)) bool decode_memory_operand();
  bool rules_allow(const uint32_t (&rule_set)[2]) const;
  DecodeStatus decode_vex(bool three_byte);
  DecodeStatus decode_evex();
  DecodeStatus decode_xop();
  DecodeStatus decode_3dnow();

  const uint8_t* p_;
  unsigned avail_;
  bool is64_;
  bool amd_;
  uint8_t mode_invalid_mask_;
  X86Insn& out_;
  unsigned i_ = 0;
  uint8_t last_rep_ = 0;
  DecodeStatus status_ = DecodeStatus::Ok;
};

DecodeStatus Decoder::run(uint64_t address) {
  // Copying a blank record compiles to a few vector moves; `out_ = X86Insn{}` became a
  // `rep stos`, whose start-up cost was a third of the decoder's time.
  static constexpr X86Insn kBlank{};
  std::memcpy(static_cast<void*>(&out_), &kBlank, sizeof kBlank);
  out_.address = address;
  out_.mode = is64_ ? Mode::Long64 : Mode::Protected32;
  Prefixes& pf = out_.prefixes;

  // Legacy prefixes and REX. A REX prefix followed by a legacy prefix is ignored (SDM vol. 2
  // 2.2.1: REX must immediately precede the opcode or the escape byte).
  if (!need(1)) return status_;
  uint8_t b = p_[0];
  while (kPrefixClasses.c[b] != kNotPrefix) {
    const uint8_t cls = kPrefixClasses.c[b];
    if (cls == kRex) {
      if (!is64_) break;  // inc/dec in 32-bit mode
      out_.rex = b;
      ++i_;
      if (!need(1)) return status_;
      b = p_[i_];
      continue;
    }
    out_.rex = 0;
    ++pf.count;
    switch (cls) {
      case kSegment: pf.segment = b; break;
      case kOpSize: pf.operand_size = true; break;
      case kAddrSize: pf.address_size = true; break;
      case kLock: pf.lock = true; break;
      case kRepne: pf.repne = true; last_rep_ = b; break;
      case kRep: pf.rep = true; last_rep_ = b; break;
      default: break;
    }
    ++i_;
    if (!need(1)) return status_;
    b = p_[i_];
  }
  // "last of F2/F3 wins": report only that one.
  if (last_rep_ == 0xf2) pf.rep = false;
  if (last_rep_ == 0xf3) pf.repne = false;

  Entry entry = tables::kPrimary[b];
  if (entry.kind == tables::kKindOp && b != 0x62 && b != 0xc4 && b != 0xc5) {
    out_.opcode = b;
    out_.opcode_offset = static_cast<uint8_t>(i_);
    ++i_;
    return decode_modrm_and_rest(entry);
  }

  switch (b) {
    case 0x0f: {
      ++i_;
      if (!need(1)) return status_;
      const uint8_t b2 = p_[i_];
      if (b2 == 0x38 || b2 == 0x3a) {
        ++i_;
        if (!need(1)) return status_;
        out_.map = b2 == 0x38 ? OpcodeMap::Map0F38 : OpcodeMap::Map0F3A;
        out_.opcode = p_[i_];
        out_.opcode_offset = static_cast<uint8_t>(i_);
        ++i_;
        const Entry* table = b2 == 0x38 ? tables::kMap0F38 : tables::kMap0F3A;
        return decode_modrm_and_rest(table[column() * 256 + out_.opcode]);
      }
      if (b2 == 0x0f) return decode_3dnow();
      out_.map = OpcodeMap::Map0F;
      out_.opcode = b2;
      out_.opcode_offset = static_cast<uint8_t>(i_);
      ++i_;
      return decode_modrm_and_rest(tables::kMap0F[column() * 256 + b2]);
    }
    case 0xc4:
    case 0xc5:
    case 0x62: {
      // In 32-bit mode these are LES/LDS/BOUND unless the next byte has mod == 11, which those
      // cannot encode (SDM vol. 2 2.3.5 / 2.7.1); in 64-bit mode they are always VEX/EVEX.
      if (!is64_) {
        ++i_;
        if (!need(1)) return status_;
        const bool escape = (p_[i_] & 0xc0) == 0xc0;
        --i_;
        if (!escape) break;
      }
      if (b == 0x62) return decode_evex();
      return decode_vex(b == 0xc4);
    }
    case 0x8f: {
      // XOP when the map field (low 5 bits of the next byte) is >= 8; POP Ev needs reg == 0,
      // which keeps those bits below 8 (APM vol. 3 1.8).
      ++i_;
      if (!need(1)) return status_;
      const bool xop = (p_[i_] & 0x1f) >= 8;
      --i_;
      if (xop) return decode_xop();
      break;
    }
    default:
      break;
  }
  out_.opcode = b;
  out_.opcode_offset = static_cast<uint8_t>(i_);
  ++i_;
  return decode_modrm_and_rest(entry);
}

inline bool Decoder::decode_memory_operand() {
  const uint8_t modrm = out_.modrm;
  const unsigned mod = modrm >> 6;
  const unsigned rm = modrm & 7;
  unsigned disp_size = 0;
  // 16-bit addressing only in 32-bit mode with 67; in 64-bit mode 67 selects 32-bit.
  if (!is64_ && out_.prefixes.address_size) {
    disp_size = mod == 1 ? 1 : mod == 2 ? 2 : (rm == 6 ? 2 : 0);
  } else {
    if (rm == 4) {
      if (!need(1)) return false;
      out_.has_sib = true;
      out_.sib = p_[i_++];
      if (mod == 0 && (out_.sib & 7) == 5) disp_size = 4;
    } else if (mod == 0 && rm == 5) {
      disp_size = 4;
      out_.rip_relative = is64_;
    }
    if (mod == 1) disp_size = 1;
    if (mod == 2) disp_size = 4;
  }
  if (disp_size != 0) {
    if (!need(disp_size)) return false;
    out_.disp_offset = static_cast<uint8_t>(i_);
    out_.disp_size = static_cast<uint8_t>(disp_size);
    out_.disp = sign_extend(load_le(p_ + i_, disp_size), disp_size);
    i_ += disp_size;
  }
  return true;
}

uint32_t Decoder::prefix_attributes(tables::Entry entry, FlowKind flow) {
  const Prefixes& pf = out_.prefixes;
  uint32_t attributes = 0;
  if ((entry.aux & tables::kAttrMandatoryPrefix) != 0) {
    if (last_rep_ != 0 || pf.operand_size) out_.prefixes.mandatory = last_rep_ != 0 ? last_rep_ : 0x66;
  } else if (pf.rep || pf.repne) {
    attributes |= attr::kRepPrefix;
  }
  if (pf.lock) attributes |= attr::kLockPrefix;
  if (pf.segment != 0) {
    attributes |= attr::kSegmentOverride;
    if (pf.segment == 0x64 || pf.segment == 0x65) attributes |= attr::kUsesFsGs;
  }
  if (pf.repne && (flow == FlowKind::Jmp || flow == FlowKind::Jcc || flow == FlowKind::Call ||
                   flow == FlowKind::Ret || flow == FlowKind::IndirectJmp || flow == FlowKind::IndirectCall))
    attributes |= attr::kBndPrefix;
  return attributes;
}

// The operand rules of opcode_map.txt (see its header). References: SDM vol. 2 2.3.6 (VEX.vvvv
// 1111b when unused), each instruction's encoding line (VEX/EVEX.L, .W), 2.7 / Tables 2-36 ff.
// (EVEX.b only with embedded broadcast, rounding or SAE; zeroing never with a memory
// destination or a mask-register destination; EVEX.L'L = 11 reserved except as rounding
// control), 2.3.12 / 2.7.8 (VSIB), the exception classes of each instruction (E4NF, E12...),
// AMD APM vol. 6 for XOP. Mask (k0-k7) and tile (tmm0-tmm7) registers have no encodings for
// the R/R'/B/X/V extension bits; outside 64-bit mode those bits are ignored.
bool Decoder::rules_allow(const uint32_t (&rule_set)[2]) const {
  using namespace tables;
  uint32_t rules = rule_set[out_.vex_w ? 1 : 0];
  // Outside 64-bit mode some W1 forms (r/m64 operands) behave as their W0 form.
  if ((rules & kRuleW1AsW0Outside64) != 0 && !is64_) rules = rule_set[0];
  if ((rules & kRuleWUndefined) != 0) return false;
  const bool register_form = out_.has_modrm && out_.modrm_mod() == 3;
  const unsigned rxb = out_.vex_rxb;
  bool check_length = true;
  if (out_.encoding == Encoding::Evex) {
    if (out_.evex_b) {
      // Register form: rounding control / SAE, and L'L is the rounding mode (or ignored).
      if ((rules & (register_form ? kRuleRoundingOrSae : kRuleBroadcast)) == 0) return false;
      check_length = !register_form;
    }
    if (out_.evex_z &&
        ((rules & (kRuleNoZeroing | kRuleRegIsMask | kRuleNeedsMask)) != 0 || ((rules & kRuleStore) != 0 && !register_form)))
      return false;
    if ((rules & (out_.evex_aaa == 0 ? kRuleNeedsMask : kRuleNoMasking)) != 0) return false;
  }
  if (check_length && ((rules >> (kRuleLengthShift + out_.vex_l)) & 1) != 0) return false;
  if ((rules & kRuleNoVvvv) != 0 && out_.vex_vvvv != 0) return false;
  if ((rules & kRuleNoVvvvLow) != 0 && (out_.vex_vvvv & 0x0f) != 0) return false;
  if ((rules & kRuleNoRexR) != 0 && (out_.rex & 0x04) != 0) return false;
  if (is64_) {
    if ((rules & kRuleMaskVvvv) != 0 && out_.vex_vvvv >= 8) return false;
    if ((rules & (kRuleRegIsMask | kRuleTileRegisters)) != 0 && (rxb & 0x0c) != 0) return false;  // R, R'
    if ((rules & kRuleRegIsGpr) != 0 && (rxb & 0x08) != 0) return false;                            // R'
    if ((rules & kRuleTileRegisters) != 0 && register_form && (rxb & 0x01) != 0) return false;     // B
    if ((rules & kRuleTileRegisters) != 0 && out_.vex_vvvv >= 8) return false;
  }
  if ((rules & kRuleDistinctTiles) != 0) {
    const unsigned dest = out_.modrm_reg(), src1 = out_.modrm_rm(), src2 = out_.vex_vvvv & 7;
    if (dest == src1 || dest == src2 || src1 == src2) return false;
  }
  if ((rules & kRuleDestinationDistinct) != 0) {
    const unsigned r = is64_ ? rxb : 0;
    const unsigned dest = out_.modrm_reg() | ((r & 4) << 1) | ((r & 8) << 1);
    if (dest == (is64_ ? out_.vex_vvvv : (out_.vex_vvvv & 7))) return false;
    if (register_form && dest == (out_.modrm_rm() | (is64_ ? ((rxb & 1) << 3) | ((rxb & 2) << 3) : 0))) return false;
  }
  if ((rules & kRuleGatherRegisters) != 0 && out_.has_sib) {
    // Destination, index (and for VEX the mask) must be distinct registers.
    const unsigned r = is64_ ? rxb : 0;
    const unsigned dest = out_.modrm_reg() | ((r & 4) << 1) | ((r & 8) << 1);
    const unsigned v_high = out_.encoding == Encoding::Evex ? (out_.vex_vvvv & 0x10) : 0;
    const unsigned index = ((out_.sib >> 3) & 7) | ((r & 2) << 2) | v_high;
    if (dest == index) return false;
    if (out_.encoding == Encoding::Vex) {
      const unsigned mask = is64_ ? out_.vex_vvvv : (out_.vex_vvvv & 7);
      if (mask == dest || mask == index) return false;
    }
  }
  return true;
}

inline DecodeStatus Decoder::decode_modrm_and_rest(Entry entry) {
  using namespace tables;
  if (entry.kind == kKindInvalid) return invalid();
  if (entry.modrm != kModrmNone) {
    if (!need(1)) return status_;
    out_.has_modrm = true;
    out_.modrm_offset = static_cast<uint8_t>(i_);
    const uint8_t modrm = out_.modrm = p_[i_++];
    const unsigned mod = modrm >> 6;
    if (entry.kind == kKindGroup) {
      entry = kGroups16[entry.aux][(mod == 3 ? 8 : 0) + ((modrm >> 3) & 7)];
    } else if (entry.kind == kKindGroupExact) {
      entry = kGroups72[entry.aux][mod == 3 ? 8 + (modrm & 63) : (modrm >> 3) & 7];
    }
    if (entry.kind != kKindOp) {
      --i_;
      return invalid();
    }
    if ((entry.modrm == kModrmMem && mod == 3) || (entry.modrm == kModrmReg && mod != 3)) {
      --i_;
      return invalid();
    }
    if (mod != 3 && entry.modrm != kModrmRegAlways && !decode_memory_operand()) return status_;
  } else if (entry.kind != kKindOp) {
    return invalid();
  }
  if ((entry.mode & mode_invalid_mask_) != 0) return invalid();
  // Operand rules of the instruction (VEX/EVEX/XOP vvvv, L, W, EVEX b/z/aaa, mask and tile
  // registers, MOV CR/DR REX.R): checked once the ModRM (and SIB) byte is known.
  if (entry.rules != 0 && !rules_allow(kRuleSets[entry.rules])) return invalid();
  // VSIB (gathers/scatters) and AMX tile loads/stores #UD without a SIB byte (SDM vol. 2 2.3.12).
  if ((entry.aux & kAttrNeedsSib) != 0 && !out_.has_sib) return invalid();
  const Prefixes& pf = out_.prefixes;
  // LOCK is #UD unless the instruction allows it and has a memory destination (SDM vol. 2, LOCK).
  if (pf.count != 0 && pf.lock && ((entry.aux & kAttrLockable) == 0 || !out_.has_modrm || out_.modrm_mod() == 3))
    return invalid();

  unsigned imm_size = 0, imm2_size = 0;
  bool relative = false, sign = true;
  bool branch16 = false;
  switch (entry.imm) {
    case kImmNone: break;
    case kImmIb: imm_size = 1; break;
    case kImmIw: imm_size = 2; sign = false; break;
    case kImmId: imm_size = 4; break;
    case kImmIz: imm_size = operand_size_16() ? 2 : 4; break;
    case kImmIv: imm_size = (out_.rex & 0x08) ? 8 : operand_size_16() ? 2 : 4; break;
    case kImmIwIb: imm_size = 2; imm2_size = 1; sign = false; break;
    case kImmIbIb: imm_size = 1; imm2_size = 1; sign = false; break;
    case kImmAp: imm_size = operand_size_16() ? 2 : 4; imm2_size = 2; sign = false; break;
    case kImmOv: {
      // moffs: an absolute address sized by the address size, kept in the disp fields.
      const unsigned size = is64_ ? (out_.prefixes.address_size ? 4 : 8) : (out_.prefixes.address_size ? 2 : 4);
      if (!need(size)) return status_;
      out_.disp_offset = static_cast<uint8_t>(i_);
      out_.disp_size = static_cast<uint8_t>(size);
      out_.disp = static_cast<int64_t>(load_le(p_ + i_, size));
      i_ += size;
      break;
    }
    case kImmJb:
    case kImmJz: {
      relative = true;
      // A 66 prefix makes a near branch 16-bit (IP truncated). In 64-bit mode Intel ignores
      // it (SDM vol. 2 Jcc/JMP/CALL: "operand size forced to 64 bits"), AMD honours it (APM
      // vol. 3 1.2.5, near branches: "can be overridden to 16 bits"). REX.W keeps 64.
      if (is64_)
        branch16 = amd_ && out_.prefixes.operand_size && (out_.rex & 0x08) == 0;
      else
        branch16 = out_.prefixes.operand_size;
      imm_size = entry.imm == kImmJb ? 1 : (branch16 ? 2 : 4);
      break;
    }
    case kImmJo:
      // XBEGIN: rel16 with 66 in every mode and for every vendor (SDM vol. 2 XBEGIN, "C7 F8
      // XBEGIN rel16", valid in 64-bit mode), and the fallback address is not truncated
      // ("Use of the 16-bit operand size does not cause this address to be truncated").
      relative = true;
      imm_size = operand_size_16() ? 2 : 4;
      break;
    default: break;
  }
  if (imm_size != 0) {
    if (!need(imm_size + imm2_size)) return status_;
    out_.imm_offset = static_cast<uint8_t>(i_);
    out_.imm_size = static_cast<uint8_t>(imm_size);
    const uint64_t raw = load_le(p_ + i_, imm_size);
    out_.imm = sign ? sign_extend(raw, imm_size) : static_cast<int64_t>(raw);
    i_ += imm_size;
    if (imm2_size != 0) {
      out_.imm2_offset = static_cast<uint8_t>(i_);
      out_.imm2_size = static_cast<uint8_t>(imm2_size);
      out_.imm2 = load_le(p_ + i_, imm2_size);
      i_ += imm2_size;
    }
  }

  out_.length = static_cast<uint8_t>(i_);
  const auto flow = static_cast<FlowKind>(entry.flow);
  out_.flow = flow;
  uint32_t attributes = entry.aux & ~static_cast<uint32_t>(kAttrLockable | kAttrMandatoryPrefix | kAttrNeedsSib);
  if (pf.count != 0) attributes |= prefix_attributes(entry, flow);
  out_.attributes = attributes;
  if (relative) {
    out_.has_rel_target = true;
    uint64_t target = out_.address + out_.length + static_cast<uint64_t>(out_.imm);
    if (branch16)
      target &= 0xffff;
    else if (!is64_)
      target &= 0xffffffff;
    out_.rel_target = target;
  }
  return DecodeStatus::Ok;
}

// VEX (SDM vol. 2 2.3.5): C5 [R vvvv L pp] or C4 [R X B mmmmm] [W vvvv L pp].
DecodeStatus Decoder::decode_vex(bool three_byte) {
  // 66, F2, F3, LOCK or REX before VEX is #UD (SDM vol. 2 2.3.2).
  if (out_.prefixes.operand_size || last_rep_ != 0 || out_.prefixes.lock || out_.rex != 0) return invalid();
  out_.encoding = Encoding::Vex;
  const unsigned size = three_byte ? 3 : 2;
  if (!need(size)) return status_;
  unsigned map;
  uint8_t last;
  if (three_byte) {
    map = p_[i_ + 1] & 0x1f;
    out_.vex_rxb = static_cast<uint8_t>((~p_[i_ + 1] >> 5) & 7);
    last = p_[i_ + 2];
    out_.vex_w = (last & 0x80) != 0;
  } else {
    map = 1;
    last = p_[i_ + 1];
    out_.vex_rxb = static_cast<uint8_t>((~last >> 5) & 4);
  }
  out_.vex_vvvv = static_cast<uint8_t>((~last >> 3) & 0x0f);
  out_.vex_l = (last >> 2) & 1;
  out_.vex_pp = last & 3;
  i_ += size;
  if (map < 1 || map > 3) return invalid();  // refused before the opcode byte is needed
  if (!need(1)) return status_;
  out_.map = static_cast<OpcodeMap>(static_cast<unsigned>(OpcodeMap::Primary) + map);
  out_.opcode = p_[i_];
  out_.opcode_offset = static_cast<uint8_t>(i_);
  ++i_;
  return decode_modrm_and_rest(tables::kVex[((map - 1) * 4 + out_.vex_pp) * 256 + out_.opcode]);
}

// EVEX (SDM vol. 2 2.7.1): 62 [R X B R' 0 mmm] [W vvvv 1 pp] [z L'L b V' aaa].
DecodeStatus Decoder::decode_evex() {
  if (out_.prefixes.operand_size || last_rep_ != 0 || out_.prefixes.lock || out_.rex != 0) return invalid();
  out_.encoding = Encoding::Evex;
  if (!need(4)) return status_;
  const uint8_t p0 = p_[i_ + 1], p1 = p_[i_ + 2], p2 = p_[i_ + 3];
  out_.vex_rxb = static_cast<uint8_t>(((~p0 >> 5) & 7) | ((p0 & 0x10) ? 0 : 8));
  out_.vex_w = (p1 & 0x80) != 0;
  out_.vex_vvvv = static_cast<uint8_t>(((~p1 >> 3) & 0x0f) | ((p2 & 0x08) ? 0 : 0x10));
  out_.vex_pp = p1 & 3;
  out_.vex_l = (p2 >> 5) & 3;
  out_.evex_b = (p2 & 0x10) != 0;
  out_.evex_z = (p2 & 0x80) != 0;
  out_.evex_aaa = p2 & 7;
  i_ += 4;
  const int map_index = evex_map_index(p0 & 7);
  // P0 bit 3 is 0 and P1 bit 2 is 1 in every EVEX encoding (SDM vol. 2 2.7.1, Table 2-30);
  // zeroing-masking with k0 (z = 1, aaa = 000) is #UD (SDM vol. 2 2.7.4).
  if ((p0 & 0x08) != 0 || (p1 & 0x04) == 0 || map_index < 0 || (out_.evex_z && out_.evex_aaa == 0)) return invalid();
  // Registers 16-31 do not exist outside 64-bit mode: EVEX.V' must be 1 there (SDM vol. 2 2.7.5).
  if (!is64_ && (p2 & 0x08) == 0) return invalid();
  if (!need(1)) return status_;
  static constexpr OpcodeMap kMaps[] = {OpcodeMap::Map0F, OpcodeMap::Map0F38, OpcodeMap::Map0F3A, OpcodeMap::Evex5,
                                        OpcodeMap::Evex6};
  out_.map = kMaps[map_index];
  out_.opcode = p_[i_];
  out_.opcode_offset = static_cast<uint8_t>(i_);
  ++i_;
  return decode_modrm_and_rest(tables::kEvex[(static_cast<unsigned>(map_index) * 4 + out_.vex_pp) * 256 + out_.opcode]);
}

// XOP (APM vol. 3 1.8): 8F [R X B mmmmm] [W vvvv L pp], maps 8, 9 and A.
DecodeStatus Decoder::decode_xop() {
  if (out_.prefixes.operand_size || last_rep_ != 0 || out_.prefixes.lock || out_.rex != 0) return invalid();
  out_.encoding = Encoding::Xop;
  if (!need(3)) return status_;
  const unsigned map = p_[i_ + 1] & 0x1f;
  out_.vex_rxb = static_cast<uint8_t>((~p_[i_ + 1] >> 5) & 7);
  const uint8_t last = p_[i_ + 2];
  out_.vex_w = (last & 0x80) != 0;
  out_.vex_vvvv = static_cast<uint8_t>((~last >> 3) & 0x0f);
  out_.vex_l = (last >> 2) & 1;
  out_.vex_pp = last & 3;
  i_ += 3;
  if (map > 0x0a || out_.vex_pp != 0) return invalid();  // XOP defines pp = 00 only
  if (!need(1)) return status_;
  out_.map = static_cast<OpcodeMap>(static_cast<unsigned>(OpcodeMap::Xop8) + (map - 8));
  out_.opcode = p_[i_];
  out_.opcode_offset = static_cast<uint8_t>(i_);
  ++i_;
  return decode_modrm_and_rest(tables::kXop[((map - 8) * 4 + out_.vex_pp) * 256 + out_.opcode]);
}

// 3DNow! (APM vol. 3 appendix A.3.3): 0F 0F ModRM [SIB] [disp] opcode-suffix.
DecodeStatus Decoder::decode_3dnow() {
  ++i_;  // the second 0F
  out_.encoding = Encoding::ThreeDNow;
  out_.map = OpcodeMap::Map3DNow;
  if (!need(1)) return status_;
  out_.has_modrm = true;
  out_.modrm_offset = static_cast<uint8_t>(i_);
  out_.modrm = p_[i_++];
  if (out_.modrm_mod() != 3 && !decode_memory_operand()) return status_;
  if (!need(1)) return status_;
  out_.opcode = p_[i_];
  out_.opcode_offset = static_cast<uint8_t>(i_);
  if (tables::k3DNow[out_.opcode].kind != tables::kKindOp || out_.prefixes.lock) return invalid();
  ++i_;
  out_.length = static_cast<uint8_t>(i_);
  out_.attributes = attr::kFpuOrSimd;
  return DecodeStatus::Ok;
}

}  // namespace

DecodeStatus decode(std::span<const uint8_t> bytes, uint64_t address, const DecoderConfig& config, X86Insn& out) {
  Decoder decoder(bytes, config, out);
  return decoder.run(address);
}

}  // namespace xprobe::insn::x86
