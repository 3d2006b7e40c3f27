#pragma once
// objdump's disassembly, parsed: the oracle for instruction boundaries. Only the addresses,
// bytes and mnemonic of each line are used; the bytes double as the section's contents.
#include <cstdint>
#include <string>
#include <vector>

namespace xprobe::test {

struct ObjdumpInsn {
  uint64_t address = 0;
  uint32_t offset = 0;  // into ObjdumpSection::bytes
  uint8_t length = 0;
  std::string mnemonic;  // first word of the disassembly text, "(bad)" for undecodable bytes
  bool bad = false;      // objdump says the bytes are not a valid instruction: "(bad)" anywhere
                         // in the text (also after prefixes: "rex.W (bad)", "lock (bad)")
};

struct ObjdumpSection {
  std::string name;
  uint64_t start = 0;
  std::vector<uint8_t> bytes;
  std::vector<ObjdumpInsn> insns;
  std::vector<uint64_t> symbols;  // addresses where objdump restarted its sweep (labels)
};

// Runs `objdump -d -z -w --insn-width=16 [extra] file` and parses every executable section.
// Throws std::runtime_error when objdump cannot be run or its output does not parse.
std::vector<ObjdumpSection> run_objdump(const std::string& file, const std::string& extra_options);

}  // namespace xprobe::test
