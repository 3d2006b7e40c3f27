#include <cstddef>
#include <cstdint>

#include "open_one_elf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)xprobe::fuzz::open_one_elf(data, size);
  return 0;
}
