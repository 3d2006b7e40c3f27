#pragma once
// Reading and writing the memory of a traced process. An interface so that the probe core,
// fetch programs and tests can work on any memory (a live process, a core, a buffer).
#include <cstddef>
#include <cstdint>
#include <span>

#include "support/result.h"

namespace xprobe::target {

// One piece of a batched read. `copied` tells how many bytes arrived (a read that crosses
// into an unmapped page stops there; the kernel's fetchargs treat that as a fault).
struct ReadRequest {
  uint64_t address = 0;
  std::span<uint8_t> buffer;
  size_t copied = 0;
};

// One piece of a batched write (Process::write_pieces).
struct WritePiece {
  uint64_t address = 0;
  std::span<const uint8_t> bytes;
};

class Memory {
 public:
  virtual ~Memory() = default;
  // Reads all of `buffer` or fails (an address that is not mapped is an error value, never a crash).
  virtual Status read(uint64_t address, std::span<uint8_t> buffer) = 0;
  // Fills every request as far as it can, in as few system calls as possible; fails only when
  // the process is gone. Check each request's `copied`.
  virtual Status read_batch(std::span<ReadRequest> requests) = 0;
  // Writes code or data, also into pages the process cannot write itself (text).
  virtual Status write(uint64_t address, std::span<const uint8_t> bytes) = 0;
};

}  // namespace xprobe::target
