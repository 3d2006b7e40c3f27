#pragma once
// What a fetch program reads: a thread's registers and a process's memory. Small interfaces
// so that the target layer implements them over ptrace / process_vm_readv (and may cache or
// batch), the jump engine over a saved register block, and tests over fakes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "probe/arch_registers.h"

namespace xprobe::probe {

class RegisterView {
 public:
  virtual ~RegisterView() = default;
  // The register's value, zero-extended; `id` indexes the arch's ptrace register block.
  virtual uint64_t read(RegisterId id) const = 0;
};

class MemoryReader {
 public:
  virtual ~MemoryReader() = default;
  // Fills all of `out` from `address`, or returns false (unmapped, unreadable, process gone).
  // The traced process is untrusted: any address may come in.
  virtual bool read(uint64_t address, std::span<uint8_t> out) = 0;
  // Fills `out` as far as memory is readable from `address` and returns how many bytes
  // arrived (strings end somewhere before the next unmapped page). The default reads page by
  // page through read(); a target can do it in one process_vm_readv.
  virtual size_t read_up_to(uint64_t address, std::span<uint8_t> out);
};

}  // namespace xprobe::probe
