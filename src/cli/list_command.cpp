// xprobe list: what can be probed in a binary by source (perf probe -F/-L/-V, bpftrace -l).
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <optional>

#include "cli/commands.h"
#include "source/listings.h"

namespace xprobe::cli {
namespace {

struct ListOptions {
  std::string binary;
  int pid = 0;
  std::optional<std::string> functions;
  std::string lines;
  std::string vars;
  std::optional<std::string> sdt;
};

int run_list(const ListOptions& options) {
  std::string binary = options.binary;
  if (options.pid != 0) {
    std::array<char, 4096> path{};
    const ssize_t length = readlink(fmt::format("/proc/{}/exe", options.pid).c_str(), path.data(), path.size() - 1);
    if (length <= 0) {
      fmt::print(stderr, "xprobe list: process {} cannot be read (no /proc/{}/exe)\n", options.pid, options.pid);
      return 2;
    }
    if (binary.empty()) binary.assign(path.data(), static_cast<size_t>(length));
  }
  if (binary.empty()) {
    fmt::print(stderr, "xprobe list: give a BINARY or -p PID\n");
    return 2;
  }
  const int chosen = (options.functions ? 1 : 0) + (!options.lines.empty() ? 1 : 0) + (!options.vars.empty() ? 1 : 0) +
                     (options.sdt ? 1 : 0);
  if (chosen != 1) {
    fmt::print(stderr, "xprobe list: choose one of --functions, --lines, --vars, --sdt\n");
    return 2;
  }
  source::SourceObjects objects;
  source::SourceObject& object = objects.get(binary);
  Result<std::string> listing = options.functions ? source::list_functions(object, *options.functions)
                                : !options.lines.empty() ? source::list_lines(object, options.lines)
                                : !options.vars.empty()  ? source::list_variables(objects, binary, options.vars)
                                                         : source::list_markers(object, *options.sdt);
  if (!listing) {
    fmt::print(stderr, "xprobe list: {}\n", listing.error().message);
    return 2;
  }
  fmt::print("{}", *listing);
  return 0;
}

}  // namespace

CommandRunner add_list_command(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  CLI::App* cmd = app.add_subcommand("list", "List functions, probe-able lines, variables or SDT markers of a binary");
  cmd->add_option("BINARY", options->binary, "the ELF object (default with -p: the process's executable).\n  ./orders");
  cmd->add_option("-p,--pid", options->pid, "the executable of this process.\n  -p 1234")->type_name("PID");
  cmd->add_option("--functions", options->functions, "functions matching GLOB (default *), with their inlined copies.\n  --functions 'handle_*'")
      ->expected(0, 1)
      ->default_str("*");
  cmd->add_option("--lines", options->lines, "FUNC's source with its probe-able lines numbered as FUNC:N places.\n  --lines handle_order")->type_name("FUNC");
  cmd->add_option("--vars", options->vars, "the variables at each address of PLACE, with their types.\n  --vars handle_order:4")->type_name("PLACE");
  cmd->add_option("--sdt", options->sdt, "SDT markers matching PROVIDER:NAME GLOB (default *).\n  --sdt 'python:*'")->expected(0, 1)->default_str("*");
  cmd->footer("Examples:\n  xprobe list ./orders --functions\n  xprobe list ./orders --lines handle_order\n"
              "  xprobe list /usr/bin/python3.11 --sdt");
  return [cmd, options]() { return cmd->parsed() ? run_list(*options) : -1; };
}

}  // namespace xprobe::cli
