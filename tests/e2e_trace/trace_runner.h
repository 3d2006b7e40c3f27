#pragma once
// Runs `xprobe trace` (or the kernel's uprobe tracer) on a program and parses the events.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xprobe::testing {

struct TraceEvent {
  std::string comm;
  pid_t tid = 0;
  unsigned cpu = 0;
  std::string event;
  std::string location;  // inside the parentheses: "0x..." or "0x... <- 0x..."
  std::vector<std::pair<std::string, std::string>> args;  // in order; strings keep their quotes
  std::string arg(const std::string& name) const;
};

// Parses ftrace text: '#' lines and blank lines are skipped. Unparseable lines are returned
// in `bad` so a test can fail on them.
std::vector<TraceEvent> parse_trace(const std::string& text, std::vector<std::string>* bad = nullptr);

struct TracedRun {
  int xprobe_status = -1;       // xprobe's exit status (the program's own when it ran to the end)
  std::string program_output;   // the traced program's stdout (xprobe's stdout, events go to -o)
  std::string diagnostics;      // xprobe's stderr
  std::string trace_text;       // the -o file
  std::vector<TraceEvent> events;
};

// `only_event_lines`: every line of the -o file must be an event (false: aggregations are there too).
TracedRun run_xprobe(const std::vector<std::string>& xprobe_args, const std::vector<std::string>& command,
                     bool only_event_lines = true);
// The same with `-o output` given by the caller (a trace directory, say), left where it is; the
// run's trace_text and events are empty.
TracedRun run_xprobe_into(const std::string& output, const std::vector<std::string>& xprobe_args,
                          const std::vector<std::string>& command);

// The file offset of a symbol of an ELF file, as uprobe_events wants it (via readelf's
// program headers: independent of xprobe's ELF code).
uint64_t file_offset_of(const std::string& elf_path, const std::string& symbol);

// The kernel as the oracle: defines `definitions` in tracefs uprobe_events (group xpt_oracle),
// runs the command, returns the events. Empty `skip_reason` when it ran.
struct KernelRun {
  std::string skip_reason;
  std::string program_output;
  int exit_status = -1;
  std::vector<TraceEvent> events;
};
// `filters`: GROUP/EVENT -> the filter written to that event's filter file (refused: skip_reason
// says so, with the kernel's error block).
KernelRun run_under_kernel_uprobes(const std::vector<std::string>& definitions, const std::vector<std::string>& command,
                                   const std::map<std::string, std::string>& filters = {});

std::string read_text_file(const std::string& path);

// The events of one name, in order, and how many there are.
std::vector<TraceEvent> events_named(const std::vector<TraceEvent>& events, const std::string& name);
size_t count(const std::vector<TraceEvent>& events, const std::string& name);

// From the --summary table: the rows of `event`, summed (a definition planted at several places
// has a row for each), read by the header's column names (FILTERED and UNWOUND are only there
// when some probe has them: absent, they count 0), and the "ring records read: N" line.
// -1: no row of `event` (or no such line).
struct SummaryCounts {
  int64_t ring_records = -1;
  int64_t recorded = -1, missed = -1, filtered = -1, unwound = -1;
};
SummaryCounts summary_counts(const std::string& diagnostics, const std::string& event);

}  // namespace xprobe::testing
