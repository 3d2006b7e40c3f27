#include "insn/x86/decoder.h"

namespace xprobe::insn::x86 {

const char* flow_kind_name(FlowKind kind) {
  switch (kind) {
    case FlowKind::None: return "none";
    case FlowKind::Jmp: return "jmp";
    case FlowKind::Jcc: return "jcc";
    case FlowKind::Call: return "call";
    case FlowKind::Ret: return "ret";
    case FlowKind::Loop: return "loop";
    case FlowKind::IndirectJmp: return "ijmp";
    case FlowKind::IndirectCall: return "icall";
    case FlowKind::Interrupt: return "int";
    case FlowKind::Syscall: return "syscall";
    case FlowKind::Iret: return "iret";
    case FlowKind::FarTransfer: return "far";
    case FlowKind::Ud: return "ud";
  }
  return "none";
}

}  // namespace xprobe::insn::x86
