#pragma once
// What the place resolver asks when no ELF symbol covers an address (a stripped binary): a
// start the instruction boundaries can be decoded from. An SDT marker's pc is one by
// construction (the assembler placed the marker's nop there); a function of the separate
// debug information (found by build-id or .gnu_debuglink) is another. The answer is a
// synthetic symbol; it never starts a jump-optimized probe's function (the jump planner wants
// the real symbol), so such probes are breakpoints.
#include <cstdint>
#include <optional>
#include <string>

#include "elf/elf_file.h"

namespace xprobe::source {

std::optional<elf::Symbol> covering_function(const elf::ElfFile& file, uint64_t link_address);

}  // namespace xprobe::source
