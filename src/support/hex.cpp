#include "support/hex.h"

namespace xprobe {

std::string format_hex_bytes(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i != 0) out.push_back(' ');
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

static int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::vector<uint8_t>> parse_hex_bytes(std::string_view text) {
  std::vector<uint8_t> out;
  size_t i = 0;
  int pending = -1;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      if (pending >= 0) return std::nullopt;  // a lone nibble before a separator
      ++i;
      continue;
    }
    if (c == '0' && i + 1 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X') && pending < 0) {
      i += 2;
      continue;
    }
    int v = hex_digit_value(c);
    if (v < 0) return std::nullopt;
    if (pending < 0) {
      pending = v;
    } else {
      out.push_back(static_cast<uint8_t>(pending << 4 | v));
      pending = -1;
    }
    ++i;
  }
  if (pending >= 0) return std::nullopt;
  return out;
}

}  // namespace xprobe
