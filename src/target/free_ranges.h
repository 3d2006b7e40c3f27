#pragma once
// Where in an address space a new mapping of `size` bytes may go so that all of it is within
// `reach` bytes of `near` (slots and trampolines are reached by relative branches from the
// code they serve) and, unless `highest_end` is 0, ends at or below it (32-bit code reaches
// only 4 GiB). Pure: the caller maps the first candidate the kernel accepts.
#include <cstdint>
#include <vector>

#include "target/maps.h"

namespace xprobe::target {

// Page-aligned start addresses, one per gap that fits, best first: below `near` before above
// it (above an executable lies its heap), then nearest. Gaps keep a guard from their
// neighbours, and the 64 MiB after [heap] belong to brk.
std::vector<uint64_t> free_ranges_near(const std::vector<MapEntry>& layout, uint64_t near, uint64_t size,
                                       uint64_t reach, uint64_t highest_end = 0);

}  // namespace xprobe::target
