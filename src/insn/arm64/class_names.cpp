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

std::string_view never_reason_text(NeverReason reason) {
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
