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

struct TraceOptions {
  std::vector<std::string> definitions;  // -e
  std::vector<std::string> files;        // -f
  pid_t pid = 0;                         // -p
  std::string output;                    // -o
  std::string format{trace::default_output_format().name};
  session::EngineChoice engine = session::EngineChoice::Auto;
  bool summary = false;
  bool follow_fork = false;
  bool no_irq_info = false;
};

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
  }

 private:
  bool summary_;
};

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
  config.pid = options.pid;
  config.command = program;
  config.output_path = options.output;
  config.format = trace::find_output_format(options.format);  // one of them: checked while parsing
  config.engine = options.engine;
  config.follow_fork = options.follow_fork;
  config.irq_info = !options.no_irq_info;
  StderrDiagnostics diagnostics(options.summary);
  return session::run_trace_session(config, diagnostics);
}

}  // namespace

CommandRunner add_trace_command(CLI::App& app, const std::vector<std::string>& program) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Trace a program with probes written in the kernel's uprobe_events syntax");
  cmd->add_option("-e,--event", options->definitions, "a probe definition, e.g. 'p:grp/ev libc.so.6:open path=+0(%di):string'");
  cmd->add_option("-f,--file", options->files, "a file of probe definitions, one per line ('#' comments)");
  cmd->add_option("-p,--pid", options->pid, "attach to this running process (every thread)");
  cmd->add_option("-o,--output", options->output, "write the events to this file (default: stdout)");
  std::vector<std::string> format_names;
  std::string format_help = "the events' format:";
  for (const trace::OutputFormat& format : trace::output_formats()) {
    format_names.emplace_back(format.name);
    format_help += fmt::format(" {} ({})", format.name, format.description);
  }
  cmd->add_option("--format", options->format, format_help)->check(CLI::IsMember(format_names));
  const std::map<std::string, session::EngineChoice> engines{
      {"auto", session::EngineChoice::Auto}, {"trap", session::EngineChoice::Trap}, {"jump", session::EngineChoice::Jump}};
  cmd->add_option("--engine", options->engine,
                  "auto (default: jump-optimized probes where proven safe, breakpoints elsewhere), trap, or jump")
      ->transform(CLI::CheckedTransformer(engines));
  cmd->add_flag("--summary", options->summary, "print a table of hits, misses and drops per probe at the end");
  cmd->add_flag("--follow-fork", options->follow_fork, "trace forked children too (default: they carry no probe)");
  cmd->add_flag("--no-irq-info", options->no_irq_info, "omit the flags column, as with the kernel's options/irq-info=0");
  cmd->footer("After --: the program to start and its arguments (passed to it untouched).");
  return [cmd, options, &program]() {
    if (!cmd->parsed()) return -1;
    return run_trace(*options, program);
  };
}

}  // namespace xprobe::cli
