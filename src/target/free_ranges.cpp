#include "target/free_ranges.h"

#include <algorithm>

namespace xprobe::target {

std::vector<uint64_t> free_ranges_near(const std::vector<MapEntry>& layout, uint64_t near, uint64_t size,
                                       uint64_t reach, uint64_t highest_end) {
  constexpr uint64_t kPageSize = 4096;
  constexpr uint64_t kLowest = 0x10000;
  constexpr uint64_t kHighestUser = 0x7ffffffff000;
  const uint64_t highest = highest_end != 0 ? std::min<uint64_t>(highest_end, kHighestUser) : kHighestUser;
  constexpr uint64_t kGuard = 16 * kPageSize;  // keep clear of neighbours (heap growth, stack guard)
  std::vector<uint64_t> candidates;
  uint64_t previous_end = kLowest;
  auto consider_gap = [&](uint64_t gap_start, uint64_t gap_end) {
    if (gap_end <= gap_start || gap_end - gap_start < size + 2 * kGuard) return;
    uint64_t low = gap_start + kGuard;
    uint64_t high = gap_end - kGuard - size;
    uint64_t pick = near < low ? low : (near > high ? high : near & ~(kPageSize - 1));
    candidates.push_back(pick);
  };
  for (const MapEntry& entry : layout) {
    if (highest_end != 0 && entry.start >= highest) break;  // nothing above is reachable
    if (entry.start > previous_end) consider_gap(previous_end, entry.start);
    // Growth room after the heap belongs to brk.
    previous_end = std::max(previous_end, entry.path == "[heap]" ? entry.end + (64 << 20) : entry.end);
  }
  consider_gap(previous_end, highest);
  auto distance = [&](uint64_t start) {
    uint64_t far_end = start + size;
    uint64_t a = start > near ? start - near : near - start;
    uint64_t b = far_end > near ? far_end - near : near - far_end;
    return std::max(a, b);
  };
  std::erase_if(candidates, [&](uint64_t start) { return distance(start) > reach; });
  std::sort(candidates.begin(), candidates.end(), [&](uint64_t a, uint64_t b) {
    bool a_below = a < near, b_below = b < near;
    if (a_below != b_below) return a_below;
    return distance(a) < distance(b);
  });
  return candidates;
}

}  // namespace xprobe::target
