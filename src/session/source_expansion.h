#pragma once
// The session's hook for source-level definitions (perf probe's places, variables, SDT
// markers): each definition line is expanded into kernel-syntax definitions before it is
// parsed (see source/source_definition.h); a kernel-syntax line comes back as written.
#include <string>
#include <string_view>
#include <vector>

#include "source/source_definition.h"
#include "support/result.h"

namespace xprobe::session {

class SourceExpansion {
 public:
  // `main_executable`: the path a definition without BINARY probes (may be empty).
  explicit SourceExpansion(std::string main_executable) { context_.main_executable = std::move(main_executable); }
  Result<std::vector<std::string>> expand(std::string_view definition);

 private:
  source::ExpansionContext context_;
  source::SourceObjects objects_;
};

// The program a command line runs: command[0] itself when it has a '/', else its first match
// on $PATH (as execvp finds it); empty when there is none.
std::string program_path(const std::string& command);

}  // namespace xprobe::session
