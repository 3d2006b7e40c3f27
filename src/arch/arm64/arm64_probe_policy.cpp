#include "arch/arm64/arm64_probe_policy.h"

namespace xprobe::arch::arm64 {

using insn::arm64::InsnClass;

std::optional<std::string> probe_refusal(const insn::arm64::Arm64Insn& insn) {
  switch (insn.cls) {
    case InsnClass::NeverProbe:
      return std::string(insn::arm64::never_reason_text(insn.never));
    case InsnClass::Exclusive:
      return "a load/store-exclusive instruction: the breakpoint's exception clears the exclusive monitor, and "
             "executed out of line it is separated from its partner, so the sequence may never succeed";
    case InsnClass::Sve:
      return "an SVE/SME instruction: xprobe's decoder does not validate the SVE/SME encodings, so it cannot prove "
             "this word is an allocated instruction";
    default:
      break;
  }
  if (insn.memory_copy_set) {
    // The Arm ARM requires CPYP/CPYM/CPYE (and SETP/SETM/SETE) to run consecutively: a copy in a
    // slot is followed by the slot's branch back, not by the next part of the sequence.
    return "a memory copy/set instruction (FEAT_MOPS): its prologue, main and epilogue parts must execute "
           "consecutively, which a copy run out of line or a jump over it breaks";
  }
  return std::nullopt;
}

}  // namespace xprobe::arch::arm64
