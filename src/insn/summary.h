#pragma once
// The architecture-neutral view of one decoded instruction: what `xprobe decode` prints
// and what tools that do not care about the encoding need.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "insn/arch.h"

namespace xprobe::insn {

struct InsnSummary {
  uint8_t length = 0;          // bytes
  std::string kind;            // control-flow kind (x86) or class (AArch64), e.g. "jcc", "none"
  std::optional<uint64_t> target;  // relative branch target, when there is one
};

// Decodes one instruction at `address`. nullopt when the bytes are not a valid instruction
// (decode prints such a byte as `bad`).
std::optional<InsnSummary> summarize(Arch arch, std::span<const uint8_t> bytes, uint64_t address);

// How far a linear sweep advances past an undecodable position (x86: one byte, as objdump
// does; AArch64: one word).
unsigned bad_insn_step(Arch arch);

}  // namespace xprobe::insn
