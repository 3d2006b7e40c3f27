#pragma once
// A text cut at every `separator`: "a:b::c" -> {"a", "b", "", "c"}; the pieces view `text`.
#include <string_view>
#include <vector>

namespace xprobe {

inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

}  // namespace xprobe
