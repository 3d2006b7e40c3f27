// libFuzzer target: every input is decoded in 64- and 32-bit mode for both vendors at
// ordinary and wrapping addresses; any broken invariant aborts with the reason.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "x86_diff/decoder_invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  for (uint64_t address : {uint64_t{0x401000}, uint64_t{0xfffffff0}, uint64_t{0xfffffffffffffff8}}) {
    const std::string problem = xprobe::test::x86::decode_and_check_all_configs(bytes, address);
    if (!problem.empty()) {
      std::fprintf(stderr, "x86 decoder invariant broken: %s\n", problem.c_str());
      std::abort();
    }
  }
  return 0;
}
