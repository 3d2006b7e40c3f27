#include "arch/arm64/probe_support/jump_patch.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "arch/arm64/probe_support/trampoline.h"

namespace xprobe::arch::arm64 {

using insn::arm64::Arm64Insn;
using insn::arm64::InsnClass;

namespace {

Result<std::vector<Arm64Insn>> decode_all(const CodeRange& range) {
  if (range.start % kJumpPatchSize != 0 || range.bytes.size() % kJumpPatchSize != 0)
    return make_error(fmt::format("the code at 0x{:x} is not whole aligned A64 words", range.start));
  std::vector<Arm64Insn> instructions;
  instructions.reserve(range.bytes.size() / 4);
  for (size_t offset = 0; offset < range.bytes.size(); offset += 4)
    instructions.push_back(*insn::arm64::decode(range.bytes.subspan(offset, 4), range.start + offset));
  return instructions;
}

bool is_call(const Arm64Insn& insn) { return insn.cls == InsnClass::Bl || insn.cls == InsnClass::Blr; }
bool is_jump(const Arm64Insn& insn) {
  switch (insn.cls) {
    case InsnClass::B:
    case InsnClass::BCond:
    case InsnClass::Cbz:
    case InsnClass::Cbnz:
    case InsnClass::Tbz:
    case InsnClass::Tbnz: return true;
    default: return false;
  }
}

// Nothing but the fall-through from the landing pad at entry reaches `second` (entry + 4):
// the proof jump_patch.h describes.
Status check_reached_from_entry_only(const JumpPatchFunction& function, const std::vector<Arm64Insn>& instructions,
                                     uint64_t second) {
  auto check_targets = [&](const std::vector<Arm64Insn>& from) -> Status {
    for (const Arm64Insn& insn : from) {
      if (insn.cls == InsnClass::Br)
        return make_error(fmt::format("an indirect jump at 0x{:x} could land after the landing pad", insn.address));
      // ADR too: a computed branch target is taken with it.
      if (insn.has_target && insn.cls != InsnClass::Adrp && insn.target == second)
        return make_error(fmt::format("the {} at 0x{:x} leads to 0x{:x}, the instruction the jump would replace",
                                      insn::arm64::class_name(insn.cls), insn.address, second));
    }
    return {};
  };
  std::vector<CodeRange> parts = function.split_parts;
  std::vector<CodeRange> known = parts;
  known.push_back(function.code);
  auto is_known = [&](uint64_t target) {
    return std::any_of(known.begin(), known.end(), [&](const CodeRange& range) {
      return target >= range.start && target < range.start + range.bytes.size();
    });
  };
  auto follow_jumps_out = [&](const std::vector<Arm64Insn>& from) -> Status {
    for (const Arm64Insn& insn : from) {
      if (!is_jump(insn) || !insn.has_target || is_known(insn.target)) continue;
      const ForeignTarget target = function.foreign ? function.foreign(insn.target) : ForeignTarget{};
      if (target.kind == ForeignCode::FunctionStart) continue;
      if (target.kind == ForeignCode::Unknown || target.fragment.bytes.empty() || known.size() > 32 ||
          insn.target < target.fragment.start || insn.target >= target.fragment.start + target.fragment.bytes.size())
        return make_error(fmt::format("the jump at 0x{:x} leaves the function for 0x{:x}, code nothing describes",
                                      insn.address, insn.target));
      known.push_back(target.fragment);
      parts.push_back(target.fragment);
    }
    return {};
  };
  if (auto ok = check_targets(instructions); !ok) return ok;
  if (auto ok = follow_jumps_out(instructions); !ok) return ok;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto part = decode_all(parts[i]);
    if (!part) return make_error(fmt::format("a split-off part: {}", part.error().message));
    if (auto ok = check_targets(*part); !ok) return ok;
    if (auto ok = follow_jumps_out(*part); !ok) return ok;
  }
  for (uint64_t pad : function.landing_pads)
    if (pad == second) return make_error(fmt::format("a C++ landing pad is at 0x{:x}, the instruction the jump would replace", pad));
  for (uint64_t symbol : function.other_symbols)
    if (symbol == second) return make_error(fmt::format("another symbol starts at 0x{:x}, where the jump would go", symbol));
  return {};
}

}  // namespace

Result<Arm64JumpPatch> plan_jump_patch(const JumpPatchFunction& function, uint64_t address, JumpPatchPlace place) {
  const CodeRange& code = function.code;
  if (address % kJumpPatchSize != 0)
    return make_error(fmt::format("0x{:x} is not a multiple of 4; A64 instructions are 4-byte aligned", address));
  if (place == JumpPatchPlace::FunctionEntry && address != code.start)
    return make_error("only a function's first instruction can become a jump");
  auto decoded = decode_all(code);
  if (!decoded) return make_error(fmt::format("the function: {}", decoded.error().message));
  const std::vector<Arm64Insn>& instructions = *decoded;
  if (address < code.start || address >= code.start + code.bytes.size())
    return make_error(fmt::format("0x{:x} is outside its function", address));
  const auto index = static_cast<size_t>((address - code.start) / kJumpPatchSize);

  Arm64JumpPatch patch;
  patch.address = address;
  patch.reported_pc = address;
  patch.displaced = instructions[index];
  if (place == JumpPatchPlace::ReturnSite) {
    if (index == 0 || !is_call(instructions[index - 1]))
      return make_error(fmt::format("0x{:x} does not follow a call in its function", address));
    if (patch.displaced.landing_pad)
      return make_error(fmt::format("the return site 0x{:x} is a landing pad (an indirect branch may land there, "
                                    "which a B cannot take on a BTI-guarded page)", address));
  } else if (patch.displaced.landing_pad) {
    if (index + 1 >= instructions.size()) return make_error("the function ends after its landing pad");
    patch.strip_link_register = patch.displaced.hint == insn::arm64::HintKind::PacSign;
    patch.displaced = instructions[index + 1];
    patch.address = address + kJumpPatchSize;
    if (patch.displaced.landing_pad)
      return make_error(fmt::format("a landing pad at 0x{:x} follows the one at the entry", patch.address));
    if (auto ok = check_reached_from_entry_only(function, instructions, patch.address); !ok)
      return make_error(fmt::format("the landing pad at the entry stays, and after it: {}", ok.error().message));
  }
  if (auto ok = check_relocatable(patch.displaced); !ok)
    return make_error(fmt::format("displaced instruction at 0x{:x}: {}", patch.displaced.address, ok.error().message));
  return patch;
}

}  // namespace xprobe::arch::arm64
