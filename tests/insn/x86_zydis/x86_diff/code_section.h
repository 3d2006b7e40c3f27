#pragma once
// Reads the bytes of one section of an ELF file: the real instructions the differential
// test mutates and the benchmark decodes.
#include <cstdint>
#include <string>
#include <vector>

#include "support/result.h"

namespace xprobe::test::x86 {

struct CodeSection {
  std::vector<uint8_t> bytes;
  uint64_t address = 0;  // sh_addr
  bool elf64 = true;     // ELFCLASS64 (x86-64) or ELFCLASS32 (i386)
};

Result<CodeSection> read_code_section(const std::string& path, const std::string& section_name = ".text");

}  // namespace xprobe::test::x86
