#include "session/source_expansion.h"

#include <unistd.h>

#include <cstdlib>

namespace xprobe::session {

Result<std::vector<std::string>> SourceExpansion::expand(std::string_view definition) {
  auto expansion = source::expand_source_definition(definition, context_, objects_);
  if (!expansion) return expansion.error();
  if (!expansion->source_level) return std::vector<std::string>{std::string(definition)};
  return std::move(expansion->definitions);
}

std::string program_path(const std::string& command) {
  if (command.empty()) return {};
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  const std::string_view directories = path != nullptr ? std::string_view(path) : std::string_view("/usr/local/bin:/usr/bin:/bin");
  size_t start = 0;
  while (start <= directories.size()) {
    const size_t colon = directories.find(':', start);
    const std::string_view directory =
        directories.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    std::string candidate(directory.empty() ? std::string_view(".") : directory);
    candidate += '/';
    candidate += command;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return {};
}

}  // namespace xprobe::session
