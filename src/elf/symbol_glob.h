#pragma once
#include <string_view>

namespace xprobe::elf {

// Shell-style glob match (* ? [abc] [a-z] [!x]) as the kernel's and perf's symbol filters use.
bool glob_match(std::string_view pattern, std::string_view text);
bool has_glob_characters(std::string_view pattern);

}  // namespace xprobe::elf
