#include "arch/arm64/probe_support/execution_plan.h"

#include <fmt/format.h>

#include "arch/arm64/arm64_probe_policy.h"
#include "arch/arm64/probe_support/breakpoint.h"
#include "support/hex.h"

namespace xprobe::arch::arm64 {

using insn::arm64::Arm64Insn;
using insn::arm64::InsnClass;
using insn::arm64::PacKey;

ExecutionPlan plan_execution(const Arm64Insn& insn) {
  auto refuse = [](std::string reason) { return ExecutionPlan{ExecutionPath::Refused, std::move(reason)}; };
  if (insn.cls == InsnClass::Unallocated) {
    const uint8_t bytes[4] = {static_cast<uint8_t>(insn.word), static_cast<uint8_t>(insn.word >> 8),
                              static_cast<uint8_t>(insn.word >> 16), static_cast<uint8_t>(insn.word >> 24)};
    return refuse("Unknown instruction: " + format_hex_bytes(bytes));
  }
  if (auto reason = probe_refusal(insn)) return refuse(std::move(*reason));
  switch (insn.cls) {
    case InsnClass::B:
    case InsnClass::Bl:
    case InsnClass::BCond:
    case InsnClass::Cbz:
    case InsnClass::Cbnz:
    case InsnClass::Tbz:
    case InsnClass::Tbnz:
    case InsnClass::Adr:
    case InsnClass::Adrp:
    case InsnClass::LdrLiteral:
    case InsnClass::LdrswLiteral:
    case InsnClass::PrfmLiteral:
      return {ExecutionPath::Simulate, {}};
    case InsnClass::LdrLiteralSimd:
      return refuse("LDR (literal) into a SIMD&FP register: its literal is relative to pc, so it cannot run out of "
                    "line, and the FP/SIMD registers are not in the register block the simulation works on");
    case InsnClass::Br:
    case InsnClass::Ret:
      if (insn.pac == PacKey::None) return {ExecutionPath::Simulate, {}};
      return {ExecutionPath::OutOfLine, {}};  // the CPU authenticates in the slot as it would here
    case InsnClass::Blr:
      if (insn.pac == PacKey::None) return {ExecutionPath::Simulate, {}};
      return refuse("BLRAA/BLRAB: out of line the link register would receive the slot's address, and a tracer "
                    "holds no pointer-authentication keys to simulate the authenticated branch");
    default:
      return {ExecutionPath::OutOfLine, {}};
  }
}

std::optional<uint32_t> encode_b(uint64_t from, uint64_t to) {
  if (from % kInstructionSize != 0 || to % kInstructionSize != 0) return std::nullopt;
  const auto distance = static_cast<int64_t>(to - from);
  constexpr int64_t kReach = int64_t{1} << 27;
  if (distance < -kReach || distance >= kReach) return std::nullopt;
  return 0x14000000u | (static_cast<uint32_t>(distance >> 2) & 0x03ffffffu);
}

Result<std::vector<uint8_t>> build_slot(const Arm64Insn& insn, uint64_t slot) {
  if (plan_execution(insn).path != ExecutionPath::OutOfLine) {
    return make_error(fmt::format("the {} instruction {:08x} does not run out of line",
                                  insn::arm64::class_name(insn.cls), insn.word));
  }
  const auto back = encode_b(slot + kInstructionSize, insn.address + kInstructionSize);
  if (!back) {
    return make_error(fmt::format("slot at 0x{:x} is out of B's reach of 0x{:x} (or misaligned)", slot, insn.address));
  }
  std::vector<uint8_t> code;
  for (uint32_t word : {insn.word, *back}) {
    for (int shift = 0; shift < 32; shift += 8) code.push_back(static_cast<uint8_t>(word >> shift));
  }
  return code;
}

}  // namespace xprobe::arch::arm64
