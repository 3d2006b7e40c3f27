#include <cstddef>
#include <cstdint>

#include "parse_one_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xprobe::fuzz::parse_one_input(data, size);
  return 0;
}
