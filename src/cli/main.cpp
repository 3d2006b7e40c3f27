#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"xprobe: probe-based event tracer for Linux processes"};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  xprobe trace -e 'p:io/open libc.so.6:open path=+0(%di):string' -- cat /etc/hostname\n"
      "  xprobe check /usr/bin/gzip main+4\n"
      "  xprobe decode /bin/true main\n"
      "  xprobe trace --ctl -p 1234, then xprobe ctl add|enable|disable|remove|list|stats|trace-pipe\n"
      "Each command has its own --help (xprobe trace --help); the manual: man xprobe.");
  std::vector<xprobe::cli::CommandRunner> commands;
  commands.push_back(xprobe::cli::add_decode_command(app));
  commands.push_back(xprobe::cli::add_check_command(app));
  commands.push_back(xprobe::cli::add_list_command(app));
  commands.push_back(xprobe::cli::add_ctl_command(app));
  std::vector<std::string> program;  // everything after the first "--": the traced program's argv, untouched
  commands.push_back(xprobe::cli::add_trace_command(app, program));
  int own_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      own_argc = i;
      program.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  CLI11_PARSE(app, own_argc, argv);
  for (auto& command : commands) {
    const int status = command();
    if (status >= 0) return status;
  }
  return 2;
}

}  // namespace

// Bad input is reported where it is found, as a value. This catch is the last line only: an
// exception that still gets here is a bug in xprobe, said in one line with a failing status
// instead of std::terminate's abort (and, while tracing, a process left stopped).
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xprobe: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "xprobe: internal error: an unknown exception\n");
  }
  return 1;
}
