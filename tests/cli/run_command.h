#pragma once
#include <cstdint>
#include <string>

struct CommandResult {
  int exit_status = -1;
  std::string out;  // stdout and stderr together
};

CommandResult run_command(const std::string& command);
uint64_t nm_address(const std::string& file, const std::string& symbol);  // 0 when absent
