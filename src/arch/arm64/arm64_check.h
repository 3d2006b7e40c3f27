#pragma once
#include <span>

#include "arch/probe_point_check.h"

namespace xprobe::arch::arm64 {

CheckOutcome check_probe_point(std::span<const uint8_t> function_bytes, uint64_t function_start, uint64_t probe_address);

}  // namespace xprobe::arch::arm64
