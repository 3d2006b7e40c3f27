#include "arch/x86/probe_support/jump_patch.h"

#include <algorithm>

#include <fmt/format.h>

#include "arch/x86/probe_support/execution_plan.h"
#include "insn/x86/decoder.h"

namespace xprobe::arch::x86 {

using insn::x86::FlowKind;
using insn::x86::X86Insn;

namespace {

// Displaced instructions the trampoline can re-create.
Status check_displaceable(const X86Insn& insn, bool last) {
  const ExecutionPlan plan = plan_execution(insn);
  if (plan.path == ExecutionPath::Refused) return make_error(plan.reason);
  switch (insn.flow) {
    case FlowKind::None:
    case FlowKind::Ret:
    case FlowKind::IndirectJmp:
    case FlowKind::Syscall:
      return {};
    case FlowKind::Jmp:
    case FlowKind::Jcc:
      if (insn.prefixes.operand_size) return make_error("a 16-bit relative branch cannot be re-encoded");
      return {};
    case FlowKind::Call:
      if (insn.prefixes.operand_size) return make_error("a 16-bit relative call cannot be re-encoded");
      if (!last) return make_error("a call among the displaced instructions would return into the jump");
      return {};
    default:
      return make_error(fmt::format("{} cannot be displaced by a jump", insn::x86::flow_kind_name(insn.flow)));
  }
}

Result<std::vector<X86Insn>> decode_all(const CodeRange& range) {
  const insn::x86::DecoderConfig config{};
  std::vector<X86Insn> instructions;
  const uint64_t end = range.start + range.bytes.size();
  for (uint64_t at = range.start; at < end;) {
    X86Insn insn;
    const auto offset = static_cast<size_t>(at - range.start);
    if (insn::x86::decode(range.bytes.subspan(offset), at, config, insn) != insn::x86::DecodeStatus::Ok)
      return make_error(fmt::format("the code does not decode to its end (at 0x{:x})", at));
    instructions.push_back(insn);
    at += insn.length;
  }
  return instructions;
}

// Branches into the displaced bytes: refused, or (return sites) redirected to the
// instruction's copy in the trampoline when the branch is a jmp/jcc with a rel32 outside the
// displaced bytes and lands on a displaced instruction.
Status check_branches(const std::vector<X86Insn>& instructions, JumpPatchPlan& plan, bool redirect) {
  const uint64_t address = plan.address, length = plan.length;
  for (const X86Insn& insn : instructions) {
    if (insn.flow == FlowKind::IndirectJmp)
      return make_error(fmt::format("an indirect jump at 0x{:x} could land anywhere", insn.address));
    if (!insn.has_rel_target || insn.rel_target <= address || insn.rel_target >= address + length) continue;
    size_t landing = plan.displaced.size();
    for (size_t i = 0; i < plan.displaced.size(); ++i)
      if (plan.displaced[i].insn.address == insn.rel_target) landing = i;
    const bool outside = insn.address + insn.length <= address || insn.address >= address + length;
    const bool rel32 = (insn.flow == FlowKind::Jmp || insn.flow == FlowKind::Jcc) && insn.imm_size == 4 &&
                       insn.imm_offset + 4u == insn.length && !insn.prefixes.operand_size;
    if (redirect && outside && rel32 && landing < plan.displaced.size()) {
      plan.redirects.push_back({insn.address, insn.length, landing});
      continue;
    }
    return make_error(fmt::format("the branch at 0x{:x} lands at 0x{:x}, inside the bytes the jump replaces",
                                  insn.address, insn.rel_target));
  }
  return {};
}

}  // namespace

Result<JumpPatchPlan> plan_jump_patch(const JumpPatchFunction& function, uint64_t address, JumpPatchPlace place) {
  const CodeRange& code = function.code;
  if (place == JumpPatchPlace::FunctionEntry && address != code.start)
    return make_error("only a function's first instruction can become a jump");
  auto decoded = decode_all(code);
  if (!decoded) return make_error(fmt::format("the function: {}", decoded.error().message));
  const std::vector<X86Insn>& instructions = *decoded;
  if (place == JumpPatchPlace::ReturnSite) {
    const bool after_call = std::any_of(instructions.begin(), instructions.end(), [&](const X86Insn& insn) {
      return insn.address + insn.length == address &&
             (insn.flow == FlowKind::Call || insn.flow == FlowKind::IndirectCall);
    });
    if (!after_call) return make_error(fmt::format("0x{:x} does not follow a call in its function", address));
  }

  JumpPatchPlan plan;
  plan.address = address;
  size_t first = instructions.size();
  for (size_t i = 0; i < instructions.size(); ++i)
    if (instructions[i].address == address) first = i;
  if (first == instructions.size()) return make_error("the probe address is not an instruction boundary");
  for (size_t i = first; i < instructions.size() && plan.length < kJumpPatchSize; ++i) {
    const X86Insn& insn = instructions[i];
    plan.length += insn.length;
    const auto offset = static_cast<size_t>(insn.address - code.start);
    auto bytes = code.bytes.subspan(offset, insn.length);
    plan.displaced.push_back({insn, std::vector<uint8_t>(bytes.begin(), bytes.end())});
  }
  if (plan.length < kJumpPatchSize) return make_error("the function ends before a jump fits");
  for (size_t i = 0; i < plan.displaced.size(); ++i) {
    if (auto ok = check_displaceable(plan.displaced[i].insn, i + 1 == plan.displaced.size()); !ok)
      return make_error(fmt::format("displaced instruction at 0x{:x}: {}", plan.displaced[i].insn.address,
                                    ok.error().message));
  }
  const bool redirect = place == JumpPatchPlace::ReturnSite;
  if (auto ok = check_branches(instructions, plan, redirect); !ok) return ok.error();
  for (const CodeRange& part : function.split_parts) {
    auto part_instructions = decode_all(part);
    if (!part_instructions) return make_error(fmt::format("a split-off part: {}", part_instructions.error().message));
    if (auto ok = check_branches(*part_instructions, plan, redirect); !ok) return ok.error();
  }
  for (uint64_t pad : function.landing_pads)
    if (pad > address && pad < address + plan.length)
      return make_error(fmt::format("a C++ landing pad at 0x{:x} lies inside the bytes the jump replaces", pad));
  for (uint64_t symbol : function.other_symbols)
    if (symbol > address && symbol < address + plan.length)
      return make_error(fmt::format("another symbol starts at 0x{:x}, inside the bytes the jump replaces", symbol));
  return plan;
}

}  // namespace xprobe::arch::x86
