#pragma once
// Properties every decode() result must have whatever the input bytes: what the libFuzzer
// target asserts and what the in-suite replay of random inputs checks with gcc.
#include <cstdint>
#include <span>
#include <string>

#include "insn/x86/decoder.h"

namespace xprobe::test::x86 {

// Empty when `insn` (the result of decode(bytes, address, config) returning `status`) is
// consistent with the bytes and with itself; otherwise what is wrong.
std::string check_decoder_invariants(std::span<const uint8_t> bytes, uint64_t address,
                                     const insn::x86::DecoderConfig& config, insn::x86::DecodeStatus status,
                                     const insn::x86::X86Insn& insn);

// Decodes `bytes` in both modes with both vendors and checks each result; also checks
// that decoding the exact instruction bytes alone gives the same length and that one byte
// less is Truncated. Empty or the first problem found, with the inputs.
std::string decode_and_check_all_configs(std::span<const uint8_t> bytes, uint64_t address);

}  // namespace xprobe::test::x86
