#pragma once
// Executable areas an engine maps into the traced process near the code they serve, handed
// out in pieces: the one allocator behind the trap engine's out-of-line slots and the jump
// engine's trampolines. Mapping an area (and what goes at its start: the system-call stub,
// the agent) stays the engine's; this only remembers the areas and what of them is used.
#include <cstdint>
#include <optional>
#include <vector>

namespace xprobe::probe::engine {

// Where a piece may lie relative to the code it serves.
struct AreaReach {
  uint64_t reach = 0;        // largest distance between any byte of the area and the code
  uint64_t highest_end = 0;  // the area must end at or below this address; 0: anywhere
};

class CodeAreas {
 public:
  // `bytes` (the next piece starting `align`-aligned) from an area within `reach` of `near`;
  // nullopt when no area has room there (the engine maps one and add()s it).
  std::optional<uint64_t> take(uint64_t near, uint64_t bytes, const AreaReach& reach, uint64_t align = 1);
  // An area of `size` bytes mapped at `start`, its first `reserved` bytes the engine's own.
  void add(uint64_t start, uint64_t size, uint64_t reserved);
  // The area holding `address`, its start; 0 for none.
  uint64_t area_start(uint64_t address) const;
  // The process's image is gone (exec), or the areas are no longer ours.
  void clear() { areas_.clear(); }

 private:
  struct Area {
    uint64_t start = 0;
    uint64_t size = 0;
    uint64_t used = 0;
  };
  std::vector<Area> areas_;
};

}  // namespace xprobe::probe::engine
