#pragma once
#include <span>

#include "arch/probe_point_check.h"
#include "insn/x86/decoder.h"

namespace xprobe::arch::x86 {

CheckOutcome check_probe_point(std::span<const uint8_t> function_bytes, uint64_t function_start, uint64_t probe_address,
                               const insn::x86::DecoderConfig& config);

}  // namespace xprobe::arch::x86
