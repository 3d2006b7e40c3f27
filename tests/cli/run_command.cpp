#include "run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <memory>

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

uint64_t nm_address(const std::string& file, const std::string& symbol) {
  CommandResult nm = run_command("nm " + file);
  const std::string needle = " " + symbol + "\n";
  const size_t at = nm.out.find(needle);
  if (at == std::string::npos) return 0;
  const size_t line_start = nm.out.rfind('\n', at);
  return std::strtoull(nm.out.c_str() + (line_start == std::string::npos ? 0 : line_start + 1), nullptr, 16);
}
