#pragma once
// A trace session: the user's definitions in, events out. It starts or attaches to the
// process, resolves and checks every probe, chooses for each the jump-optimized engine or a
// breakpoint, plants it again when a library loads or the program execs, builds the events
// and writes them in the chosen format, and reports what went wrong through Diagnostics.
#include <sys/types.h>

#include <string>
#include <vector>

#include "session/diagnostics.h"
#include "trace/aggregation/summaries.h"
#include "trace/output_format.h"

namespace xprobe::session {

// Which engine carries the probes.
enum class EngineChoice {
  Auto,  // jump-optimized where proven safe, breakpoints elsewhere
  Trap,  // breakpoints only
  Jump,  // every probe jump-optimized, or refuse to start
};

struct DefinitionSource {
  enum class Kind { Text, File };
  Kind kind = Kind::Text;
  std::string value;  // the definition itself, or the path of a file of definitions
};

struct SessionConfig {
  // In the order they apply: a later `-:GRP/EVENT` deletes an earlier definition.
  std::vector<DefinitionSource> definitions;
  // Attach to these processes (one session traces them all: a definition applies to every
  // one that maps its object), or:
  std::vector<pid_t> pids;
  std::vector<std::string> command;  // start this program
  std::string output_path;           // empty: stdout
  const trace::OutputFormat* format = &trace::default_output_format();
  EngineChoice engine = EngineChoice::Auto;
  bool follow_fork = false;  // trace forked children too (with breakpoints)
  bool irq_info = true;      // ftrace's flags column
  // --filter 'GRP/EVENT:EXPR': the kernel's event filter grammar (probe/filter/event_filter.h);
  // a later one for the same event replaces an earlier one (and a definition's `if EXPR`).
  std::vector<std::string> filters;
  // Aggregations instead of event lines for the events they name: the kernel's hist trigger
  // (--hist 'GRP/EVENT:hist:keys=...', trace/aggregation/hist_trigger.h) and bpftrace's and
  // bcc's summaries (--count, --hist GRP/EVENT:FIELD, --lhist, --sum, --avg, --min, --max,
  // --latency; trace/aggregation/summaries.h), printed at the end and every `interval_seconds`.
  struct AggregationOption {
    trace::SummaryKind kind = trace::SummaryKind::Count;
    std::string text;  // the option's value
  };
  std::vector<AggregationOption> aggregations;
  unsigned interval_seconds = 0;  // 0: only at the end
  bool clear_each_interval = false;
  // --ctl: a control socket (control_socket.h) through which probes are added, removed,
  // enabled and disabled while tracing; the session may then start with no definitions.
  bool control_socket = false;
  // --control DIR: the same, as a tracefs-compatible FUSE mount at DIR (tracefs_mount.h).
  std::string control_mount;
  // The in-memory event buffer behind the control surfaces' trace and trace-pipe (KiB).
  unsigned buffer_size_kb = 1408;
};

// Runs the whole session, until every traced process is gone (or a SIGINT/SIGTERM detaches
// from all of them). Returns the exit status for xprobe: the program's own when it ran to its
// end (of several -p, the first one's), 128+N when signal N killed it, the program's status
// after a detach from a program xprobe started (0 for an attached one), 1 or 2 for xprobe's
// own errors (refused probes, bad input, a process that could not be attached or traced on).
int run_trace_session(const SessionConfig& config, Diagnostics& diagnostics);

}  // namespace xprobe::session
