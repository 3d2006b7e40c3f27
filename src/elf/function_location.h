#pragma once
// "SYMBOL[+|-OFFS]" or "0xADDR" in an ELF file -> the function's bytes and the probe address.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "elf/elf_file.h"
#include "support/result.h"

namespace xprobe::elf {

struct FunctionLocation {
  std::string function_name;
  uint64_t function_start = 0;
  std::span<const uint8_t> function_bytes;
  uint64_t address = 0;  // function_start + offset
};

Result<FunctionLocation> locate_in_function(const ElfFile& file, std::string_view spec);

}  // namespace xprobe::elf
