#include <CLI/CLI.hpp>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"xprobe: probe-based event tracer for Linux processes"};
  app.require_subcommand(1);
  std::vector<xprobe::cli::CommandRunner> commands;
  commands.push_back(xprobe::cli::add_decode_command(app));
  commands.push_back(xprobe::cli::add_check_command(app));
  commands.push_back(xprobe::cli::add_trace_command(app));
  CLI11_PARSE(app, argc, argv);
  for (auto& command : commands) {
    const int status = command();
    if (status >= 0) return status;
  }
  return 2;
}
