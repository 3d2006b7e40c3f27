#pragma once
// The test's own idea of each instruction's class, from the mnemonic and operands that
// aarch64-linux-gnu-objdump prints: written from the instruction names in the Arm ARM and
// xprobe's documented policy, independently of the decoder's encoding tables.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xprobe::test {

struct ObjdumpInsn {
  uint64_t address = 0;
  uint32_t word = 0;
  std::string mnemonic;  // ".inst" for words objdump cannot decode
  std::string operands;
};

// Runs objdump -d on `path` (all executable sections) and returns every instruction line.
std::vector<ObjdumpInsn> disassemble_with_objdump(const std::string& path);

// The class name (as insn::arm64::class_name prints it) an instruction with this mnemonic
// and these operands belongs to; "unallocated" for `.inst` words and UDF.
std::string expected_class(std::string_view mnemonic, std::string_view operands);

}  // namespace xprobe::test
