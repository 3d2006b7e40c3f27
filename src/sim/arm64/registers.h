#pragma once
// The A64 user-visible register state the simulator reads and writes: no probe, no process.
#include <array>
#include <cstdint>

namespace xprobe::sim::arm64 {

struct Registers {
  std::array<uint64_t, 31> x{};  // X0..X30 (X30 = LR)
  uint64_t sp = 0;
  uint64_t pc = 0;
  uint32_t nzcv = 0;  // PSTATE.{N,Z,C,V} in bits 31:28, as MRS NZCV reads them
  std::array<std::array<uint8_t, 16>, 32> v{};  // V0..V31, little-endian bytes

  bool operator==(const Registers&) const = default;
};

}  // namespace xprobe::sim::arm64
