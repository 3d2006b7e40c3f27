#include "probe/filter/trailing_filter.h"

#include <algorithm>
#include <cctype>

namespace xprobe::probe::filter {

DefinitionAndFilter split_trailing_filter(std::string_view line) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (quoted || i == 0 || !space(line[i - 1])) continue;
    if (line.substr(i, 2) != "if" || (i + 2 < line.size() && !space(line[i + 2]))) continue;
    size_t end = i;
    while (end > 0 && space(line[end - 1])) --end;
    return {std::string(line.substr(0, end)), std::string(line.substr(std::min(line.size(), i + 3)))};
  }
  return {std::string(line), std::nullopt};
}

}  // namespace xprobe::probe::filter
