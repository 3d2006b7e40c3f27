#pragma once
// The function around an address of an object, and what proves where it starts: its symbol
// (.symtab, else .dynsym), or, in stripped code that no symbol covers, the .eh_frame FDE whose
// range holds the address (compilers emit one per function for unwinding, and stripping
// keeps .eh_frame). Instruction boundaries are walked from that start, so a probe point is
// refused only where nothing delimits the code.
#include <cstdint>
#include <optional>
#include <string>

#include "elf/elf_file.h"

namespace xprobe::elf {

struct CodeRange {
  enum class Proof : uint8_t { Symbol, FrameDescription };
  Symbol function;  // for an FDE: no name, the FDE's start and size
  Proof proof = Proof::Symbol;
  // "symbol NAME", or ".eh_frame FDE 0xBEGIN-0xEND" (link-time addresses).
  std::string proof_text() const;
};

std::optional<CodeRange> code_range_containing(const ElfFile& file, uint64_t link_address);

}  // namespace xprobe::elf
