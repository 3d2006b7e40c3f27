#include "arch/x86/x86_probe_policy.h"

namespace xprobe::arch::x86 {

using insn::x86::FlowKind;
using insn::x86::X86Insn;
namespace attr = insn::x86::attr;

// The whole policy, in the order it is checked. What is accepted, and why:
//  * relative branches and calls, RIP-relative operands: the engine relocates or simulates
//    them (the decoder gives the displacement and target);
//  * LOCK-prefixed instructions: atomic read-modify-write on memory works the same from the
//    out-of-line slot, the memory operand is not RIP-dependent once relocated;
//  * SYSCALL and INT 0x80: they can run from the slot. SYSCALL stores the address after
//    itself in RCX and the kernel returns there, i.e. to the slot's jump back; the only
//    observable difference is RCX (and R11 holds RFLAGS), which the system-call ABI
//    declares clobbered, so no correct program reads RCX expecting its own RIP. A syscall
//    restarted by the kernel (-ERESTARTSYS rewinds RIP by 2) re-executes the slot's copy,
//    which is the same instruction. Only code that reads RIP-derived values left by the
//    syscall would notice; the engine must therefore place the jump back directly after the
//    copied syscall. INT 0x80 returns to the next instruction the same way.
// Refused:
std::optional<std::string> probe_refusal(const X86Insn& insn) {
  switch (insn.flow) {
    case FlowKind::Interrupt:
      // CD 80 is Linux's 32-bit system call gate: accepted like SYSCALL (see above).
      if (insn.opcode == 0xcd && insn.imm_size == 1 && static_cast<uint8_t>(insn.imm) == 0x80) break;
      if (insn.opcode == 0xcc || (insn.opcode == 0xcd && static_cast<uint8_t>(insn.imm) == 3))
        return "an int3 breakpoint is already there (another debugger or an inline trap); its SIGTRAP would be taken "
               "for the probe's";
      if (insn.opcode == 0xf1) return "int1 raises a debug trap (SIGTRAP) by design";
      return "a software interrupt raises a signal in user space; the program expects it at this address";
    case FlowKind::Ud:
      return "the instruction raises #UD (SIGILL) by design; run from a copy, the fault address would be the copy's";
    case FlowKind::Iret:
      return "iret/uiret reload RIP and CS from the stack; they cannot be executed out of line";
    case FlowKind::FarTransfer:
      return "a far jump, call or return changes the code segment; it cannot be relocated";
    case FlowKind::Syscall:
      // SYSENTER returns to a fixed address (the vDSO's landing pad, set in MSR_IA32_SYSENTER_EIP
      // by the kernel), not to the next instruction; SYSRET/SYSEXIT are privileged.
      if (insn.opcode == 0x05) break;  // syscall: accepted, see above
      if (insn.opcode == 0x34) return "sysenter returns to a fixed address, not to the next instruction";
      return "sysret/sysexit are privileged (they fault in user space)";
    default:
      break;
  }
  if (insn.has(attr::kTransactional))
    return "a transactional (TSX) instruction: the breakpoint's trap aborts the transaction, so the probe would "
           "change which path the program takes";
  if (insn.has(attr::kPrivileged))
    return "a privileged or IOPL-sensitive instruction: it faults at user level (or needs I/O privilege), probing "
           "it would only move the fault";
  return std::nullopt;
}

}  // namespace xprobe::arch::x86
