#pragma once
// The x86 software breakpoint: int3. After it traps, rip points one byte past it.
#include <cstdint>

namespace xprobe::arch::x86 {

inline constexpr uint8_t kBreakpointByte = 0xcc;
inline constexpr uint64_t kBreakpointLength = 1;

// The address of the int3 that trapped, from rip at the SIGTRAP stop.
inline uint64_t breakpoint_address_from_ip(uint64_t ip) { return ip - kBreakpointLength; }

}  // namespace xprobe::arch::x86
