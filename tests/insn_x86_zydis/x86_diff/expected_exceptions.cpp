// Disagreement classes with Zydis 4.0 where xprobe's decoder is right (it follows the
// processor as the Intel SDM / AMD APM describe it, and objdump 2.40's ISA coverage).
// Each entry matches one narrow opcode class on the raw bytes, so a new bug elsewhere
// cannot hide behind it.
#include "x86_diff/differential.h"

namespace xprobe::test::x86 {

const std::vector<ExpectedException>& expected_exceptions() {
  static const std::vector<ExpectedException> exceptions = {};
  return exceptions;
}

}  // namespace xprobe::test::x86
