// Where a mapping near some code may go (target/free_ranges.h), on made-up address spaces.
#include "target/free_ranges.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace xprobe::target {
namespace {

MapEntry mapping(uint64_t start, uint64_t end, std::string path = "") {
  MapEntry entry;
  entry.start = start;
  entry.end = end;
  entry.path = std::move(path);
  return entry;
}

constexpr uint64_t kGuard = 16 * 4096;

TEST(FreeRanges, PrefersTheGapBelowTheCodeThenTheNearest) {
  // code at 0x40000000; free below it down to 0x30000000, free above it after its heap.
  const std::vector<MapEntry> layout = {mapping(0x10000, 0x30000000), mapping(0x40000000, 0x40010000),
                                        mapping(0x40010000, 0x40100000, "[heap]"), mapping(0x7f0000000000, 0x7f0000010000)};
  const auto candidates = free_ranges_near(layout, 0x40000000, 0x10000, uint64_t{1} << 31);
  ASSERT_FALSE(candidates.empty());
  // Right below the code, its guard kept.
  EXPECT_EQ(candidates.front(), 0x40000000 - kGuard - 0x10000);
  // Nothing inside the heap's growth room, nothing out of reach.
  for (uint64_t start : candidates) {
    EXPECT_FALSE(start >= 0x40010000 && start < 0x40100000 + (64 << 20)) << std::hex << start;
    const uint64_t far_end = start + 0x10000;
    const uint64_t distance = std::max(start > 0x40000000 ? start - 0x40000000 : 0x40000000 - start,
                                       far_end > 0x40000000 ? far_end - 0x40000000 : 0x40000000 - far_end);
    EXPECT_LE(distance, uint64_t{1} << 31) << std::hex << start;
  }
}

TEST(FreeRanges, HonoursTheHighestEndAndTheReach) {
  const std::vector<MapEntry> layout = {mapping(0x10000, 0x200000), mapping(0x80000000, 0x80001000)};
  // 32-bit code: the area must end at or below 4 GiB.
  for (uint64_t start : free_ranges_near(layout, 0x80000000, 0x10000, uint64_t{1} << 40, uint64_t{1} << 32))
    EXPECT_LE(start + 0x10000, uint64_t{1} << 32) << std::hex << start;
  // A reach smaller than any gap's distance: nothing.
  const std::vector<MapEntry> packed = {mapping(0x10000, 0x7fff00000000)};
  EXPECT_TRUE(free_ranges_near(packed, 0x20000, 0x10000, 0x1000).empty());
}

}  // namespace
}  // namespace xprobe::target
