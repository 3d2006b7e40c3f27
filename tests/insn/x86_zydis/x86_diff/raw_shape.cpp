#include "x86_diff/raw_shape.h"

#include <fmt/format.h>

namespace xprobe::test::x86 {

using insn::x86::Mode;

bool is_legacy_prefix(uint8_t byte) {
  switch (byte) {
    case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
    case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
      return true;
    default:
      return false;
  }
}

uint8_t RawShape::mandatory_prefix() const {
  if (encoding != RawEncoding::Legacy && encoding != RawEncoding::ThreeDNow) {
    static constexpr uint8_t kFromPp[4] = {0, 0x66, 0xf3, 0xf2};
    return kFromPp[pp & 3];
  }
  if (last_f2_f3 != 0) return last_f2_f3;
  return has_66 ? 0x66 : 0;
}

RawShape scan_raw_shape(std::span<const uint8_t> bytes, Mode mode) {
  RawShape shape;
  size_t i = 0;
  const bool long64 = mode == Mode::Long64;
  while (i < bytes.size()) {
    const uint8_t b = bytes[i];
    if (is_legacy_prefix(b)) {
      if (shape.rex != 0) shape.ignored_rex = true;
      shape.rex = 0;
      ++shape.legacy_prefix_count;
      switch (b) {
        case 0x66: shape.has_66 = true; break;
        case 0x67: shape.has_67 = true; break;
        case 0xf0: shape.has_f0 = true; break;
        case 0xf2: shape.has_f2 = true; shape.last_f2_f3 = b; break;
        case 0xf3: shape.has_f3 = true; shape.last_f2_f3 = b; break;
        default: shape.segment = b; break;
      }
      ++i;
    } else if (long64 && (b & 0xf0) == 0x40) {
      shape.rex = b;
      ++i;
    } else {
      break;
    }
  }
  if (i >= bytes.size()) return shape;

  const uint8_t first = bytes[i];
  const bool has_next = i + 1 < bytes.size();
  const uint8_t next = has_next ? bytes[i + 1] : 0;
  // Outside 64-bit mode C4/C5/62 are LES/LDS/BOUND unless the next byte's top bits are 11,
  // and 8F is POP r/m unless XOP's map field is 8 or more; in 64-bit mode 62 is always EVEX.
  const bool vector_form = long64 || (next & 0xc0) == 0xc0;
  size_t payload = 0;
  if (first == 0xc5 && has_next && vector_form) {
    shape.encoding = RawEncoding::Vex2;
    shape.map = 1;
    shape.pp = next & 3;
    shape.l = (next >> 2) & 1;
    payload = 1;
  } else if ((first == 0xc4 || first == 0x8f) && has_next && (first == 0x8f ? (next & 0x1f) >= 8 : vector_form)) {
    shape.encoding = first == 0xc4 ? RawEncoding::Vex3 : RawEncoding::Xop;
    shape.map = next & 0x1f;
    if (i + 2 < bytes.size()) {
      const uint8_t p = bytes[i + 2];
      shape.w = (p & 0x80) != 0;
      shape.l = (p >> 2) & 1;
      shape.pp = p & 3;
    }
    payload = 2;
  } else if (first == 0x62 && has_next && vector_form) {
    shape.encoding = RawEncoding::Evex;
    shape.map = next & 7;
    if (i + 2 < bytes.size()) {
      shape.w = (bytes[i + 2] & 0x80) != 0;
      shape.pp = bytes[i + 2] & 3;
    }
    if (i + 3 < bytes.size()) shape.l = (bytes[i + 3] >> 5) & 3;
    payload = 3;
  }
  if (shape.encoding != RawEncoding::Legacy) {
    shape.opcode_offset = i + 1 + payload;
  } else if (first == 0x0f && has_next && (next == 0x38 || next == 0x3a)) {
    shape.map = next == 0x38 ? 2 : 3;
    shape.opcode_offset = i + 2;
  } else if (first == 0x0f && has_next && next == 0x0f) {
    shape.encoding = RawEncoding::ThreeDNow;  // the real opcode is the trailing suffix byte
    shape.map = 0x0f;
    shape.opcode_offset = i + 1;
  } else if (first == 0x0f) {
    shape.map = 1;
    shape.opcode_offset = i + 1;
  } else {
    shape.opcode_offset = i;
  }
  if (shape.opcode_offset < bytes.size()) {
    shape.has_opcode = true;
    shape.opcode = bytes[shape.opcode_offset];
  }
  if (shape.opcode_offset + 1 < bytes.size()) {
    shape.has_modrm_byte = true;
    shape.modrm = bytes[shape.opcode_offset + 1];
  }
  return shape;
}

std::string describe_opcode_class(const RawShape& shape, bool coarse) {
  std::string text;
  switch (shape.encoding) {
    case RawEncoding::Legacy: text = "legacy"; break;
    case RawEncoding::Vex2: text = "vex2"; break;
    case RawEncoding::Vex3: text = "vex3"; break;
    case RawEncoding::Evex: text = "evex"; break;
    case RawEncoding::Xop: text = "xop"; break;
    case RawEncoding::ThreeDNow: text = "3dnow"; break;
  }
  if (!shape.has_opcode) return text + " (no opcode byte)";
  if (shape.encoding == RawEncoding::Legacy) {
    static constexpr const char* kEscape[4] = {"", "0f ", "0f 38 ", "0f 3a "};
    text += fmt::format(" {}{:02x}", kEscape[shape.map & 3], shape.opcode);
  } else if (shape.encoding == RawEncoding::ThreeDNow) {
    text += " 0f 0f";
  } else {
    text += fmt::format(" map{} {:02x}", shape.map, shape.opcode);
    if (!coarse) text += fmt::format(" L{} W{}", shape.l, shape.w ? 1 : 0);
  }
  if (const uint8_t pfx = shape.mandatory_prefix(); pfx != 0) text += fmt::format(" pfx={:02x}", pfx);
  if (shape.encoding == RawEncoding::Legacy && shape.has_f0) text += " lock";
  // ModRM.reg selects group members in the legacy maps; in the VEX/EVEX maps it is mostly
  // a register, so only register vs memory form names the class there.
  if (coarse) return text;
  if (shape.has_modrm_byte && shape.encoding == RawEncoding::Legacy) text += fmt::format(" /{}", shape.modrm_reg());
  if (shape.has_modrm_byte) text += shape.modrm_is_register() ? " reg" : " mem";
  return text;
}

}  // namespace xprobe::test::x86
