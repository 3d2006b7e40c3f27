#include "probe/kernel_numbers.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace xprobe::probe {
namespace {

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

}  // namespace

bool is_good_name(std::string_view name) {
  if (name.empty()) return false;
  const auto first = static_cast<unsigned char>(name[0]);
  if (!std::isalpha(first) && first != '_') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_';
  });
}

uint64_t parse_prefix_unsigned(std::string_view text, size_t& consumed) {
  unsigned base = 10;
  size_t i = 0;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') && text.size() > 2 &&
      digit_value(text[2]) < 16) {
    base = 16;
    i = 2;
  } else if (!text.empty() && text[0] == '0') {
    base = 8;
  }
  uint64_t value = 0;
  while (i < text.size() && digit_value(text[i]) < static_cast<int>(base)) {
    value = value * base + static_cast<uint64_t>(digit_value(text[i]));
    if (value > (1ull << 40)) value = 1ull << 40;  // saturate: callers only accept small values
    ++i;
  }
  consumed = i;
  return value;
}

std::optional<uint64_t> parse_unsigned(std::string_view text, bool allow_plus) {
  if (allow_plus && !text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  unsigned base = 10;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
    if (text.empty()) return std::nullopt;
  } else if (text.size() >= 2 && text[0] == '0') {
    base = 8;
  }
  uint64_t value = 0;
  for (char c : text) {
    const int d = digit_value(c);
    if (d >= static_cast<int>(base)) return std::nullopt;
    if (value > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) / base) return std::nullopt;
    value = value * base + static_cast<uint64_t>(d);
  }
  return value;
}

std::optional<int64_t> parse_signed(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  const auto magnitude = negative ? parse_unsigned(text.substr(1), false) : parse_unsigned(text);
  if (!magnitude) return std::nullopt;
  if (negative) {
    if (*magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - *magnitude);
  }
  if (*magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(*magnitude);
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<uint64_t> parse_unsigned_decimal(std::string_view digits) {
  uint64_t value = 0;
  for (char c : digits) {
    if (value > (std::numeric_limits<uint64_t>::max() - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

std::optional<int64_t> parse_negated(std::string_view magnitude) {
  const auto value = parse_unsigned(magnitude, false);
  if (!value || *value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
  return static_cast<int64_t>(0 - *value);
}

}  // namespace xprobe::probe
