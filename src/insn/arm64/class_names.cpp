#include "insn/arm64/arm64_insn.h"

namespace xprobe::insn::arm64 {

std::string_view class_name(InsnClass cls) {
  switch (cls) {
    case InsnClass::Unallocated: return "unallocated";
    case InsnClass::Adr: return "adr";
    case InsnClass::Adrp: return "adrp";
    case InsnClass::B: return "b";
    case InsnClass::Bl: return "bl";
    case InsnClass::BCond: return "bcond";
    case InsnClass::Cbz: return "cbz";
    case InsnClass::Cbnz: return "cbnz";
    case InsnClass::Tbz: return "tbz";
    case InsnClass::Tbnz: return "tbnz";
    case InsnClass::LdrLiteral: return "ldr_lit";
    case InsnClass::LdrLiteralSimd: return "ldr_lit_simd";
    case InsnClass::LdrswLiteral: return "ldrsw_lit";
    case InsnClass::PrfmLiteral: return "prfm_lit";
    case InsnClass::Br: return "br";
    case InsnClass::Blr: return "blr";
    case InsnClass::Ret: return "ret";
    case InsnClass::Exclusive: return "exclusive";
    case InsnClass::NeverProbe: return "never";
    case InsnClass::Hint: return "hint";
    case InsnClass::Sve: return "sve";
    case InsnClass::Other: return "none";
  }
  return "unallocated";
}

bool is_simulated(InsnClass cls) {
  switch (cls) {
    case InsnClass::Adr:
    case InsnClass::Adrp:
    case InsnClass::B:
    case InsnClass::Bl:
    case InsnClass::BCond:
    case InsnClass::Cbz:
    case InsnClass::Cbnz:
    case InsnClass::Tbz:
    case InsnClass::Tbnz:
    case InsnClass::LdrLiteral:
    case InsnClass::LdrLiteralSimd:
    case InsnClass::LdrswLiteral:
    case InsnClass::PrfmLiteral:
    case InsnClass::Br:
    case InsnClass::Blr:
    case InsnClass::Ret:
      return true;
    default:
      return false;
  }
}

}  // namespace xprobe::insn::arm64
