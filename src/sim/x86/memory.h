#pragma once
// The simulator's window on memory: the stack for call/ret, memory operands of indirect
// branches. Implemented by whoever owns the memory (a traced process, a test buffer).
#include <cstdint>
#include <span>

#include "support/result.h"

namespace xprobe::sim::x86 {

class SimMemory {
 public:
  virtual ~SimMemory() = default;
  virtual Status read(uint64_t address, std::span<uint8_t> bytes) = 0;
  virtual Status write(uint64_t address, std::span<const uint8_t> bytes) = 0;
};

}  // namespace xprobe::sim::x86
