#pragma once
// A definition may end in `if EXPR`, as the kernel's triggers write their filters
// ("p:g/e open path=+0(%di):string if path ~ \"/etc/*\""): the filter of its event.
#include <optional>
#include <string>
#include <string_view>

namespace xprobe::probe::filter {

struct DefinitionAndFilter {
  std::string definition;
  std::optional<std::string> filter;  // the text after the word `if`
};

// Splits at the first word `if` outside a quoted immediate string (\"...\").
DefinitionAndFilter split_trailing_filter(std::string_view line);

}  // namespace xprobe::probe::filter
