// Branches, exception generating and system instructions (op1 = 101x).
#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64::detail {

static void set_target(Arm64Insn& insn, int64_t offset) {
  insn.offset = offset;
  insn.target = insn.address + static_cast<uint64_t>(offset);
  insn.has_target = true;
}

static void decode_exception(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t opc = field(w, 23, 21), op2 = field(w, 4, 2), ll = field(w, 1, 0);
  insn.cls = InsnClass::Unallocated;
  if (op2 != 0) return;
  auto never = [&](NeverReason reason) {
    insn.cls = InsnClass::NeverProbe;
    insn.never = reason;
  };
  switch (opc) {
    case 0b000:
      if (ll == 0b01) never(NeverReason::SupervisorCall);
      if (ll == 0b10) never(NeverReason::HypervisorCall);
      if (ll == 0b11) never(NeverReason::SecureMonitorCall);
      return;
    case 0b001:
      if (ll == 0) never(NeverReason::Breakpoint);
      return;
    case 0b010:
      if (ll == 0) never(NeverReason::Halt);
      return;
    case 0b011:  // TCANCEL (TME): aborts a transaction, nothing pc-relative
      if (ll == 0) insn.cls = InsnClass::Other;
      return;
    case 0b101:
      if (ll != 0) never(NeverReason::DebugStateChange);
      return;
    default:
      return;
  }
}

static void decode_branch_register(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t opc = field(w, 24, 21), op2 = field(w, 20, 16), op3 = field(w, 15, 10);
  const uint8_t rn = static_cast<uint8_t>(field(w, 9, 5)), op4 = static_cast<uint8_t>(field(w, 4, 0));
  insn.cls = InsnClass::Unallocated;
  if (op2 != 0b11111) return;
  insn.rn = rn;
  const bool plain = op3 == 0 && op4 == 0;
  const bool pac = op3 == 0b000010 || op3 == 0b000011;
  const PacKey key = op3 == 0b000011 ? PacKey::B : PacKey::A;
  auto branch = [&](InsnClass cls) { insn.cls = cls; };
  switch (opc) {
    case 0b0000:
    case 0b0001: {  // BR/BLR, BRAAZ/BRABZ/BLRAAZ/BLRABZ
      const InsnClass cls = opc == 0 ? InsnClass::Br : InsnClass::Blr;
      if (plain) branch(cls);
      if (pac && op4 == 0b11111) {
        branch(cls);
        insn.pac = key;
        insn.pac_zero_modifier = true;
      }
      return;
    }
    case 0b0010:  // RET, RETAA/RETAB
      if (plain) branch(InsnClass::Ret);
      if (pac && rn == 0b11111 && op4 == 0b11111) {
        branch(InsnClass::Ret);
        insn.rn = 30;
        insn.pac = key;
        insn.pac_sp_modifier = true;
      }
      return;
    case 0b0100:  // ERET, ERETAA/ERETAB
      if (rn == 0b11111 && ((plain) || (pac && op4 == 0b11111))) {
        insn.cls = InsnClass::NeverProbe;
        insn.never = NeverReason::ExceptionReturn;
      }
      return;
    case 0b0101:  // DRPS
      if (plain && rn == 0b11111) {
        insn.cls = InsnClass::NeverProbe;
        insn.never = NeverReason::DebugRestore;
      }
      return;
    case 0b1000:
    case 0b1001:  // BRAA/BRAB/BLRAA/BLRAB with a register modifier
      if (pac) {
        branch(opc == 0b1000 ? InsnClass::Br : InsnClass::Blr);
        insn.pac = key;
        insn.rm = op4;
      }
      return;
    default:
      return;
  }
}

void decode_branch_exception_system(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const uint32_t op0 = field(w, 31, 29);
  if ((op0 & 0b011) == 0b000) {  // B, BL
    insn.cls = bit(w, 31) ? InsnClass::Bl : InsnClass::B;
    set_target(insn, sign_extend(field(w, 25, 0), 26) * 4);
    return;
  }
  if ((op0 & 0b011) == 0b001) {
    if (!bit(w, 25)) {  // CBZ, CBNZ
      insn.cls = bit(w, 24) ? InsnClass::Cbnz : InsnClass::Cbz;
      insn.is_64bit = bit(w, 31);
      insn.rn = static_cast<uint8_t>(field(w, 4, 0));
      set_target(insn, sign_extend(field(w, 23, 5), 19) * 4);
    } else {  // TBZ, TBNZ
      insn.cls = bit(w, 24) ? InsnClass::Tbnz : InsnClass::Tbz;
      insn.rn = static_cast<uint8_t>(field(w, 4, 0));
      insn.test_bit = static_cast<uint8_t>(field(w, 31, 31) << 5 | field(w, 23, 19));
      insn.is_64bit = bit(w, 31);
      set_target(insn, sign_extend(field(w, 18, 5), 14) * 4);
    }
    return;
  }
  if (op0 == 0b010) {  // conditional branch (immediate): o1 (bit 24) must be 0
    if (field(w, 25, 24) != 0) {
      insn.cls = InsnClass::Unallocated;
      return;
    }
    insn.cls = InsnClass::BCond;
    insn.cond = static_cast<uint8_t>(field(w, 3, 0));
    insn.consistent_hint = bit(w, 4);
    set_target(insn, sign_extend(field(w, 23, 5), 19) * 4);
    return;
  }
  if (op0 == 0b110) {
    switch (field(w, 25, 24)) {
      case 0b00:
        decode_exception(insn);
        return;
      case 0b01:
        decode_system(insn);
        return;
      default:
        decode_branch_register(insn);
        return;
    }
  }
  insn.cls = InsnClass::Unallocated;  // op0 = x11
}

}  // namespace xprobe::insn::arm64::detail
