// xprobe list: what can be probed in a binary by source (perf probe -F/-L/-V, bpftrace -l).
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <optional>

#include "cli/commands.h"
#include "source/listings.h"

namespace xprobe::cli {
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

}  // namespace xprobe::cli
