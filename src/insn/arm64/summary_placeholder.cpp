#include "insn/arm64/arm64_summary.h"
namespace xprobe::insn::arm64 {
std::optional<InsnSummary> summarize(std::span<const uint8_t>, uint64_t) { return std::nullopt; }
}  // namespace xprobe::insn::arm64
