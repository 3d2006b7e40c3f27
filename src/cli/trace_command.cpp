// xprobe trace: start or attach to a program and print its probe events.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <string>

#include "cli/commands.h"
#include "session/trace_session.h"
#include "target/wait.h"
#include "trace/probe_statistics.h"

namespace xprobe::cli {
namespace {

// Diagnostics on stderr, each line of a message after "xprobe: " ("xprobe trace: " for what
// the command line lacks), and the counts at the end as a profile or a --summary table.
class StderrDiagnostics final : public session::Diagnostics {
 public:
  explicit StderrDiagnostics(bool summary) : summary_(summary) {}

  void report(const session::Diagnostic& diagnostic) override {
    const char* prefix = diagnostic.severity == session::Severity::Usage ? "xprobe trace" : "xprobe";
    if (diagnostic.parse_error) {
      if (!diagnostic.message.empty()) fmt::print(stderr, "{}: {}\n", prefix, diagnostic.message);
      fmt::print(stderr, "{}", diagnostic.parse_error->render());
      return;
    }
    fmt::print(stderr, "{}: {}\n", prefix, diagnostic.message);
  }

  void tracing_ended(const trace::EventCatalog& catalog, const trace::ProbeStatistics& statistics) override {
    fmt::print(stderr, "{}", summary_ ? trace::format_summary(catalog, statistics) : trace::format_profile(catalog, statistics));
    if (statistics.dropped() != 0) fmt::print(stderr, "xprobe: {} events were dropped\n", statistics.dropped());
    if (statistics.overwritten() != 0)
      fmt::print(stderr,
                 "xprobe: {} events were overwritten in the buffer behind trace and trace_pipe (buffer_size_kb) "
                 "before they were read there (-o or stdout has them)\n",
                 statistics.overwritten());
  }

 private:
  bool summary_;
};

}  // namespace

int run_trace(const TraceOptions& options, const std::vector<std::string>& program) {
  // Kept until the process is gone: a SIGINT or SIGTERM that arrives once tracing is over
  // (the profile printed, exit handlers running) must not kill xprobe and replace the
  // program's exit status with 128 + the signal. Never destroyed, on purpose.
  static const target::StopSignals* const until_exit = new target::StopSignals;
  static_cast<void>(until_exit);
  session::SessionConfig config;
  for (const std::string& file : options.files) config.definitions.push_back({session::DefinitionSource::Kind::File, file});
  for (const std::string& text : options.definitions)
    config.definitions.push_back({session::DefinitionSource::Kind::Text, text});
  config.pids = options.pids;
  config.command = program;
  config.output_path = options.output;
  config.format = trace::find_output_format(options.format);  // one of them: checked while parsing
  config.engine = options.engine;
  config.follow_fork = options.follow_fork;
  config.irq_info = !options.no_irq_info;
  config.filters = options.filters;
  config.aggregations = options.aggregations;
  config.interval_seconds = options.interval;
  config.clear_each_interval = options.clear;
  config.control_socket = options.control_socket;
  config.control_mount = options.control_mount;
  config.buffer_size_kb = options.buffer_size_kb;
  StderrDiagnostics diagnostics(options.summary);
  return session::run_trace_session(config, diagnostics);
}

}  // namespace xprobe::cli
