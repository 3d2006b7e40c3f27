#include "probe/engine/code_areas.h"

#include <algorithm>

namespace xprobe::probe::engine {
namespace {

uint64_t align_up(uint64_t value, uint64_t to) { return to <= 1 ? value : (value + to - 1) / to * to; }

}  // namespace

std::optional<uint64_t> CodeAreas::take(uint64_t near, uint64_t bytes, const AreaReach& reach, uint64_t align) {
  for (Area& area : areas_) {
    const uint64_t low = std::min(area.start, near), high = std::max(area.start + area.size, near);
    if (high - low > reach.reach) continue;
    if (reach.highest_end != 0 && area.start + area.size > reach.highest_end) continue;
    const uint64_t at = align_up(area.used, align);
    if (at + bytes > area.size) continue;
    area.used = at + bytes;
    return area.start + at;
  }
  return std::nullopt;
}

void CodeAreas::add(uint64_t start, uint64_t size, uint64_t reserved) { areas_.push_back(Area{start, size, reserved}); }

uint64_t CodeAreas::area_start(uint64_t address) const {
  for (const Area& area : areas_)
    if (address >= area.start && address < area.start + area.size) return area.start;
  return 0;
}

}  // namespace xprobe::probe::engine
