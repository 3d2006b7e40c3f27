#pragma once
// One argument's value at one hit, as a fetch program produced it; the formatters print it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/fetch_type.h"

namespace xprobe::probe {

struct FetchedValue {
  FetchType type;
  // A memory read failed somewhere on the way. As in the kernel, a faulting number is
  // recorded as 0 and a faulting string prints (fault).
  bool fault = false;
  // Integer kinds (u/s/x, char, symbol, bitfield): one raw value per element,
  // zero-extended from the type's size (bitfields already extracted).
  std::vector<uint64_t> numbers;
  // String kinds: one per element; nullopt = that element faulted. NUL-free, at most
  // kMaxStringSize - 1 bytes, raw bytes as the process had them.
  std::vector<std::optional<std::string>> strings;

  size_t element_count() const { return type.is_string() ? strings.size() : numbers.size(); }
};

}  // namespace xprobe::probe
