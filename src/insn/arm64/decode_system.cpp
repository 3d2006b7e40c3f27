// System instructions (bits 31:22 = 110101010x): hints, barriers, PSTATE writes, SYS/SYSL,
// MSR/MRS, and the 128-bit SYSP/MSRR/MRRS.
#include "insn/arm64/decode_groups.h"

namespace xprobe::insn::arm64::detail {

namespace {

struct SystemFields {
  bool read;      // L
  uint32_t op0, op1, crn, crm, op2, rt;
};

SystemFields system_fields(uint32_t w) {
  return {bit(w, 21), field(w, 20, 19), field(w, 18, 16), field(w, 15, 12), field(w, 11, 8), field(w, 7, 5),
          field(w, 4, 0)};
}

void never(Arm64Insn& insn, NeverReason reason) {
  insn.cls = InsnClass::NeverProbe;
  insn.never = reason;
}

void decode_hint(Arm64Insn& insn, uint32_t crm_op2) {
  insn.cls = InsnClass::Hint;
  HintKind kind = HintKind::Other;
  switch (crm_op2) {
    case 0b0000'000: kind = HintKind::Nop; break;
    case 0b0000'001: kind = HintKind::Yield; break;
    case 0b0000'010: kind = HintKind::WaitForEvent; break;
    case 0b0000'011: kind = HintKind::WaitForInterrupt; break;
    case 0b0000'100:
    case 0b0000'101: kind = HintKind::SendEvent; break;
    case 0b0000'111: kind = HintKind::PacStrip; break;
    case 0b0001'000:
    case 0b0001'010:
    case 0b0011'000:
    case 0b0011'001:
    case 0b0011'010:
    case 0b0011'011: kind = HintKind::PacSign; break;
    case 0b0001'100:
    case 0b0001'110:
    case 0b0011'100:
    case 0b0011'101:
    case 0b0011'110:
    case 0b0011'111: kind = HintKind::PacAuth; break;
    default:
      if ((crm_op2 & 0b1111'001) == 0b0100'000) kind = HintKind::Bti;
      break;
  }
  insn.hint = kind;
  // BTI and the PACI[AB]SP forms are valid landing pads for indirect branches.
  insn.landing_pad = kind == HintKind::Bti || crm_op2 == 0b0011'001 || crm_op2 == 0b0011'011;
}

void decode_barrier(Arm64Insn& insn, const SystemFields& f) {
  bool allocated = false;
  switch (f.op2) {
    case 0b001: allocated = (f.crm & 0b11) == 0b10; break;  // DSB nXS
    case 0b010:                                            // CLREX
    case 0b100:                                            // DSB
    case 0b101:                                            // DMB
    case 0b110: allocated = true; break;                   // ISB
    case 0b011:                                            // TCOMMIT
    case 0b111: allocated = f.crm == 0; break;             // SB
    default: break;
  }
  if (!allocated) insn.cls = InsnClass::Unallocated;
}

void decode_pstate(Arm64Insn& insn, const SystemFields& f) {
  const uint32_t selector = f.op1 << 3 | f.op2;
  switch (selector) {
    case 0b000'000:  // CFINV, XAFLAG, AXFLAG
    case 0b000'001:
    case 0b000'010:
      if (f.crm != 0) insn.cls = InsnClass::Unallocated;
      return;
    case 0b000'011:  // UAO
    case 0b000'100:  // PAN
    case 0b000'101:  // SPSel
    case 0b001'000:  // ALLINT (CRm 000x), PM (CRm 001x)
      never(insn, NeverReason::PrivilegedPstateWrite);
      return;
    case 0b011'001:  // SSBS
    case 0b011'010:  // DIT
    case 0b011'011:  // SVCR (SMSTART, SMSTOP)
    case 0b011'100:  // TCO
      return;
    case 0b011'110:  // DAIFSet
    case 0b011'111:  // DAIFClr
      never(insn, NeverReason::InterruptMaskWrite);
      return;
    default:
      insn.cls = InsnClass::Unallocated;
      return;
  }
}

// SYS/SYSL/SYSP and MSR/MRS/MSRR/MRRS share the same operand fields; op1 = 3 is EL0's space.
void classify_system_access(Arm64Insn& insn, const SystemFields& f) {
  if (f.op0 == 0b01) {
    if (f.op1 != 0b011) never(insn, NeverReason::PrivilegedSystemInsn);
    return;
  }
  if (f.op0 == 0b10) {
    never(insn, NeverReason::DebugRegister);
    return;
  }
  if (f.read) {
    // Linux emulates EL0 reads of the ID registers (op1 = 0, CRn = 0): those run anywhere.
    const bool id_space = f.op1 == 0 && f.crn == 0;
    if (f.op1 != 0b011 && !id_space) never(insn, NeverReason::PrivilegedRegisterRead);
    return;
  }
  const bool daif = f.op1 == 0b011 && f.crn == 0b0100 && f.crm == 0b0010 && f.op2 == 0b001;
  if (daif) {
    never(insn, NeverReason::InterruptMaskWrite);
  } else if (f.op1 != 0b011) {
    never(insn, NeverReason::PrivilegedRegisterWrite);
  }
}

}  // namespace

void decode_system(Arm64Insn& insn) {
  const uint32_t w = insn.word;
  const SystemFields f = system_fields(w);
  const uint32_t group = field(w, 23, 22);
  if (group == 0b01) {  // SYSP, MSRR, MRRS (FEAT_SYSREG128, FEAT_SYSINSTR128)
    const bool sysp = !f.read && f.op0 == 0b01;
    const bool register_pair = (f.op0 & 0b10) != 0;
    if (!sysp && !register_pair) {
      insn.cls = InsnClass::Unallocated;
      return;
    }
    classify_system_access(insn, f);
    return;
  }
  if (group != 0b00) {
    insn.cls = InsnClass::Unallocated;
    return;
  }
  if (f.op0 != 0b00) {
    classify_system_access(insn, f);
    return;
  }
  insn.cls = InsnClass::Unallocated;
  if (f.read) {  // TSTART, TTEST
    if (f.op1 == 0b011 && f.crn == 0b0011 && f.op2 == 0b011 && (f.crm & 0b1110) == 0) insn.cls = InsnClass::Other;
    return;
  }
  if (f.crn == 0b0100) {
    if (f.rt != 0b11111) return;
    insn.cls = InsnClass::Other;
    decode_pstate(insn, f);
    return;
  }
  if (f.op1 != 0b011) return;
  switch (f.crn) {
    case 0b0001:  // WFET, WFIT
      if (f.crm == 0 && f.op2 <= 0b001) insn.cls = InsnClass::Other;
      return;
    case 0b0010:
      if (f.rt == 0b11111) decode_hint(insn, f.crm << 3 | f.op2);
      return;
    case 0b0011:
      if (f.rt != 0b11111) return;
      insn.cls = InsnClass::Other;
      decode_barrier(insn, f);
      return;
    default:
      return;
  }
}

}  // namespace xprobe::insn::arm64::detail
