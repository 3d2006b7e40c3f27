#include "arch/x86/probe_support/execution_plan.h"

#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "arch/x86/probe_support/rel32.h"
#include "arch/x86/probe_support/trampoline.h"
#include "insn/x86/decoder.h"
#include "sim/x86/branch_sim.h"

namespace xprobe::arch::x86 {

using insn::x86::FlowKind;
using insn::x86::X86Insn;
namespace attr = insn::x86::attr;

namespace {


}  // namespace

ExecutionPlan plan_execution(const X86Insn& insn) {
  auto refuse = [](std::string reason) { return ExecutionPlan{ExecutionPath::Refused, std::move(reason)}; };
  const bool is32 = insn.mode == insn::x86::Mode::Protected32;
  switch (insn.flow) {
    case FlowKind::Jmp:
    case FlowKind::Jcc:
    case FlowKind::Call:
    case FlowKind::Loop:
    case FlowKind::IndirectCall:
      if (sim::x86::can_emulate(insn)) return {ExecutionPath::Emulate, {}};
      return refuse(fmt::format("{} with this encoding cannot be emulated", insn::x86::flow_kind_name(insn.flow)));
    case FlowKind::Ret:
    case FlowKind::IndirectJmp:
      break;
    case FlowKind::Syscall:
      // sysenter (and AMD's syscall in compatibility mode) returns through the vDSO to a
      // fixed place, not to the instruction after the copy.
      if (is32) return refuse("sysenter/syscall in 32-bit code does not return after itself");
      break;
    case FlowKind::None:
      if (insn.has_rel_target) return refuse("instruction with a relative target (xbegin) cannot run out of line");
      break;
    case FlowKind::Interrupt:
      return refuse("interrupt instructions trap by themselves");
    case FlowKind::Ud:
      return refuse("undefined-opcode instruction");
    case FlowKind::Iret:
    case FlowKind::FarTransfer:
      return refuse("far transfer or iret changes the code segment");
  }
  if (insn.has(attr::kPrivileged)) return refuse("privileged instruction");
  if (insn.has(attr::kChangesCodeSegment) && insn.flow != FlowKind::Syscall) return refuse("changes the code segment");
  if (insn.rip_relative && insn.disp_size != 4) return refuse("RIP-relative operand without a 32-bit displacement");
  return {ExecutionPath::OutOfLine, {}};
}

Result<std::vector<uint8_t>> build_slot(std::span<const uint8_t> bytes, const X86Insn& insn, uint64_t original,
                                        uint64_t slot) {
  auto relocated = relocate_rip_relative(bytes, insn, original, slot);
  if (!relocated) return relocated.error();
  std::vector<uint8_t> code = std::move(*relocated);
  if (!append_rel32_branch(code, slot, {kJmpRel32}, original + insn.length))
    return make_error(fmt::format("slot at 0x{:x} is out of jump reach of 0x{:x}", slot, original));
  if (code.size() > kSlotSize) return make_error("slot overflow");
  return code;
}

uint64_t original_address_for_slot_ip(uint64_t ip, uint64_t slot, uint64_t original, uint64_t length) {
  if (ip == slot) return original;
  if (ip == slot + length) return original + length;
  return 0;
}

}  // namespace xprobe::arch::x86
