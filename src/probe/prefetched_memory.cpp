#include "probe/prefetched_memory.h"

#include <algorithm>
#include <cstring>

namespace xprobe::probe {

void PrefetchedMemory::add_block(uint64_t address, std::vector<uint8_t> bytes) {
  if (!bytes.empty()) blocks_.push_back(Block{address, std::move(bytes)});
}

size_t PrefetchedMemory::copy_from_blocks(uint64_t address, std::span<uint8_t> out) const {
  for (const Block& block : blocks_) {
    if (address < block.address || address - block.address >= block.bytes.size()) continue;
    const auto start = static_cast<size_t>(address - block.address);
    const size_t available = std::min(out.size(), block.bytes.size() - start);
    std::memcpy(out.data(), block.bytes.data() + start, available);
    return available;
  }
  return 0;
}

bool PrefetchedMemory::read(uint64_t address, std::span<uint8_t> out) {
  const size_t served = copy_from_blocks(address, out);
  if (served == out.size()) return true;
  ++fallback_reads_;
  return fallback_.read(address + served, out.subspan(served));
}

size_t PrefetchedMemory::read_up_to(uint64_t address, std::span<uint8_t> out) {
  const size_t served = copy_from_blocks(address, out);
  if (served == out.size()) return served;
  ++fallback_reads_;
  return served + fallback_.read_up_to(address + served, out.subspan(served));
}

}  // namespace xprobe::probe
