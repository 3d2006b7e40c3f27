#pragma once
// Integers appended to a std::string as the event formatters print them, without a format
// string: fmt::format_to into a std::string parses its format and goes through a growing
// iterator buffer on every call, which was most of an ftrace line's cost
// (bench/trace_format). fmt::format_int does the digits.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace xprobe::trace {

inline void append_decimal(std::string& out, uint64_t value) {
  const fmt::format_int digits(value);
  out.append(digits.data(), digits.size());
}

inline void append_decimal(std::string& out, int64_t value) {
  const fmt::format_int digits(value);
  out.append(digits.data(), digits.size());
}

// "0x%llx": no padding, lower case.
inline void append_hex(std::string& out, uint64_t value) {
  char digits[16];
  size_t at = sizeof(digits);
  do {
    digits[--at] = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  } while (value != 0);
  out += "0x";
  out.append(digits + at, sizeof(digits) - at);
}

}  // namespace xprobe::trace
