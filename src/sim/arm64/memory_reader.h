#pragma once
// Where literal loads read from: a live process, a core file or a test's buffer.
#include <cstddef>
#include <cstdint>

namespace xprobe::sim::arm64 {

class MemoryReader {
 public:
  virtual ~MemoryReader() = default;
  // Reads `length` bytes at `address` into `buffer`; false when any of them is unreadable.
  virtual bool read(uint64_t address, void* buffer, size_t length) = 0;
};

}  // namespace xprobe::sim::arm64
