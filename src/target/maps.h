#pragma once
// /proc/PID/maps: the address space of the target, one entry per mapping.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

namespace xprobe::target {

struct MapEntry {
  uint64_t start = 0;
  uint64_t end = 0;  // one past the last byte
  bool readable = false;
  bool writable = false;
  bool executable = false;
  bool shared = false;
  uint64_t offset = 0;  // file offset of `start`
  uint64_t inode = 0;
  std::string path;  // file path, "[heap]", "[stack]", "[vdso]", or empty for anonymous memory

  bool contains(uint64_t address) const { return address >= start && address < end; }
};

// Parses the text of a maps file. A malformed line is an error naming the line.
Result<std::vector<MapEntry>> parse_maps(std::string_view text);
Result<std::vector<MapEntry>> read_maps(pid_t pid);

// The mapping holding `address`, or nullptr.
const MapEntry* find_mapping(const std::vector<MapEntry>& maps, uint64_t address);

}  // namespace xprobe::target
