#pragma once
// A decoder-independent look at the first bytes of a case: its prefixes, its encoding
// escape and its opcode. Used to name disagreement classes and to write the narrow
// predicates of the expected-exception list without trusting either decoder under test.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "insn/x86/x86_insn.h"

namespace xprobe::test::x86 {

enum class RawEncoding : uint8_t { Legacy, Vex2, Vex3, Evex, Xop, ThreeDNow };

struct RawShape {
  uint8_t legacy_prefix_count = 0;
  bool has_66 = false, has_67 = false, has_f0 = false, has_f2 = false, has_f3 = false;
  uint8_t last_f2_f3 = 0;       // the last of F2/F3, as the processor picks it
  uint8_t segment = 0;          // last segment override or 0
  uint8_t rex = 0;              // REX right before the opcode (64-bit mode) or 0
  bool ignored_rex = false;     // a REX followed by a legacy prefix (the processor ignores it)
  RawEncoding encoding = RawEncoding::Legacy;
  uint8_t map = 0;              // legacy: 0 primary, 1 0F, 2 0F38, 3 0F3A; VEX/EVEX/XOP: mmmmm
  uint8_t pp = 0;               // VEX/EVEX/XOP pp
  bool w = false;
  uint8_t l = 0;
  size_t opcode_offset = 0;
  bool has_opcode = false;
  uint8_t opcode = 0;
  bool has_modrm_byte = false;  // a byte follows the opcode (whether or not it is a ModRM)
  uint8_t modrm = 0;

  uint8_t mandatory_prefix() const;  // legacy: F2/F3 (last wins) else 66 else 0; vector: from pp
  uint8_t modrm_reg() const { return (modrm >> 3) & 7; }
  bool modrm_is_register() const { return (modrm >> 6) == 3; }
};

RawShape scan_raw_shape(std::span<const uint8_t> bytes, insn::x86::Mode mode);

// "legacy 0f 38 f0 pfx=f2 /1 mem": a stable name of the opcode class a case falls in;
// coarse drops the ModRM and VEX.L/W parts ("legacy 0f 38 f0 pfx=f2").
std::string describe_opcode_class(const RawShape& shape, bool coarse = false);

bool is_legacy_prefix(uint8_t byte);

}  // namespace xprobe::test::x86
