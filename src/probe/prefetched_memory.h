#pragma once
// Batching for the hit path: the engine reads what a hit will need (the stack window of
// ProbeFetchPlan::stack_words_read, a struct it knows about) in one process_vm_readv, hands
// the blocks to a PrefetchedMemory, and runs the fetch programs against it. Reads inside a
// block cost nothing; anything else falls through to the real reader.
#include <cstdint>
#include <vector>

#include "probe/fetch_interfaces.h"

namespace xprobe::probe {

class PrefetchedMemory final : public MemoryReader {
 public:
  explicit PrefetchedMemory(MemoryReader& fallback) : fallback_(fallback) {}

  // `bytes` were read from `address` (a short read: pass only what arrived).
  void add_block(uint64_t address, std::vector<uint8_t> bytes);
  void clear() { blocks_.clear(); }

  bool read(uint64_t address, std::span<uint8_t> out) override;
  size_t read_up_to(uint64_t address, std::span<uint8_t> out) override;

  // Reads that reached the fallback reader (for tests and statistics).
  uint64_t fallback_reads() const { return fallback_reads_; }

 private:
  struct Block {
    uint64_t address;
    std::vector<uint8_t> bytes;
  };
  // How many bytes of [address, address + size) one block serves from its start, or 0.
  size_t copy_from_blocks(uint64_t address, std::span<uint8_t> out) const;

  MemoryReader& fallback_;
  std::vector<Block> blocks_;
  uint64_t fallback_reads_ = 0;
};

}  // namespace xprobe::probe
