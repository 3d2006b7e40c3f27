#include "insn/arm64/arm64_insn.h"
#include "insn/arm64/arm64_summary.h"

namespace xprobe::insn::arm64 {

std::optional<InsnSummary> summarize(std::span<const uint8_t> bytes, uint64_t address) {
  const auto insn = decode(bytes, address);
  if (!insn || insn->cls == InsnClass::Unallocated) return std::nullopt;
  InsnSummary summary;
  summary.length = 4;
  summary.kind = std::string(class_name(insn->cls));
  if (insn->has_target) summary.target = insn->target;
  return summary;
}

}  // namespace xprobe::insn::arm64
