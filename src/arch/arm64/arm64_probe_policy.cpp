#include "arch/arm64/arm64_probe_policy.h"

namespace xprobe::arch::arm64 {

using insn::arm64::InsnClass;
using insn::arm64::NeverReason;

std::string_view never_probe_reason(NeverReason reason) {
  switch (reason) {
    case NeverReason::None: return "";
    case NeverReason::Breakpoint:
      return "BRK is a breakpoint itself: its trap belongs to whoever planted it (a debugger or the program)";
    case NeverReason::Halt: return "HLT enters halting debug state, which belongs to an external debugger";
    case NeverReason::SupervisorCall:
      return "SVC executed out of line would put the slot's address in the kernel's view of the thread "
             "(syscall restart rewinds to pc - 4, signal frames and clone children record the slot)";
    case NeverReason::HypervisorCall: return "HVC calls the hypervisor and is undefined at EL0";
    case NeverReason::SecureMonitorCall: return "SMC calls the secure monitor and is undefined at EL0";
    case NeverReason::ExceptionReturn: return "exception returns (ERET, ERETAA, ERETAB) replace pc and PSTATE";
    case NeverReason::DebugRestore: return "DRPS restores debug state and is undefined at EL0";
    case NeverReason::DebugStateChange: return "DCPS1/2/3 change the debug state and belong to an external debugger";
    case NeverReason::DebugRegister:
      return "it accesses debug/trace system registers, which a tracer's breakpoints and single-step own";
    case NeverReason::PrivilegedRegisterWrite:
      return "it writes a system register of EL1 or higher: privileged state a tracer must not disturb";
    case NeverReason::PrivilegedRegisterRead:
      return "it reads a system register of EL1 or higher, which traps at EL0: executed out of line the fault "
             "would be reported at the slot's address";
    case NeverReason::InterruptMaskWrite: return "it writes the interrupt masks (DAIF)";
    case NeverReason::PrivilegedPstateWrite:
      return "it writes privileged PSTATE fields (SPSel, PAN, UAO, ALLINT, PM)";
    case NeverReason::PrivilegedSystemInsn:
      return "it is a privileged system instruction (TLB, address translation or cache maintenance of EL1+)";
  }
  return "";
}

std::optional<std::string> probe_refusal(const insn::arm64::Arm64Insn& insn) {
  switch (insn.cls) {
    case InsnClass::NeverProbe:
      return std::string(never_probe_reason(insn.never));
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
