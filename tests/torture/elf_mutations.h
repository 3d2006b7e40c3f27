#pragma once
// A deterministic corpus of malformed ELF files made from real ones: truncations at every
// header boundary, ELF/section/program header fields set to hostile values, symbol entries
// pointing outside everything, and random byte flips. Input for the ELF reader's fuzz body.
#include <cstdint>
#include <string>
#include <vector>

namespace xprobe::torture {

struct MutatedElf {
  std::string how;  // e.g. "truncated at 64", "shdr[3].sh_offset=0xffffffffffffffff"
  std::vector<uint8_t> bytes;
};

// `count_random` random-flip mutations are added to the structured ones; `seed` fixes them.
std::vector<MutatedElf> mutate_elf(const std::vector<uint8_t>& original, uint32_t seed, size_t count_random);

}  // namespace xprobe::torture
