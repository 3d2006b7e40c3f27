#pragma once
// `xprobe trace`: definitions -> a launched or attached process -> resolved, checked probes
// -> the trap engine -> events in ftrace's format. Owns everything that lives for one run.
#include <sys/types.h>

#include <string>
#include <vector>

namespace xprobe::cli {

struct TraceOptions {
  std::vector<std::string> definitions;  // -e
  std::vector<std::string> files;        // -f
  pid_t pid = 0;                         // -p
  std::vector<std::string> command;      // after --
  std::string output;                    // -o; empty = stdout
  std::string format = "ftrace";         // ftrace | json
  bool summary = false;
  bool follow_fork = false;
  bool no_irq_info = false;
  // auto: jump-optimized where proven safe, breakpoints elsewhere; trap: breakpoints only;
  // jump: every probe jump-optimized, or refuse to start.
  std::string engine = "auto";
};

// Returns the exit status for xprobe: the program's own when it ran to its end, 128+N when a
// signal killed it, 0 after a detach, 1 or 2 for xprobe's own errors (refused probes, bad input).
int run_trace(const TraceOptions& options);

}  // namespace xprobe::cli
