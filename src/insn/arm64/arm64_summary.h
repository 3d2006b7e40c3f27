#pragma once
#include <optional>
#include <span>

#include "insn/summary.h"

namespace xprobe::insn::arm64 {

// The architecture-neutral summary of the A64 instruction in bytes[0..4) (little-endian) at
// `address`: length 4, kind = the class name, target for pc-relative branches and literals.
// nullopt for an unallocated encoding or fewer than 4 bytes.
std::optional<InsnSummary> summarize(std::span<const uint8_t> bytes, uint64_t address);

}  // namespace xprobe::insn::arm64
