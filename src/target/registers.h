#pragma once
// A thread's general registers as ptrace hands them over, in the tracer's own layout
// (arch/register_block.h). The arch/ layer knows the fields; this layer only moves the block.
#include <cstdint>

#include "arch/register_block.h"

namespace xprobe::target {

struct Registers {
  arch::RegisterBlock raw{};

  uint64_t ip() const { return arch::block_ip(raw); }
  uint64_t sp() const { return arch::block_sp(raw); }
  // The register a Go program keeps its running goroutine's g in (meaningless elsewhere).
  uint64_t goroutine() const { return arch::block_goroutine(raw); }
  void set_ip(uint64_t value) { arch::set_block_ip(raw, value); }
};

}  // namespace xprobe::target
