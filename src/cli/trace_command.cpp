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
  std::vector<std::string> filters;      // --filter
  std::vector<session::SessionConfig::AggregationOption> aggregations;  // in the order given
  unsigned interval = 0;
  bool clear = false;
  std::vector<pid_t> pids;               // -p, repeatable
  std::string output;                    // -o
  std::string format{trace::default_output_format().name};
  session::EngineChoice engine = session::EngineChoice::Auto;
  bool summary = false;
  bool follow_fork = false;
  bool no_irq_info = false;
  bool control_socket = false;  // --ctl
  std::string control_mount;    // --control DIR
  unsigned buffer_size_kb = 1408;
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
    if (statistics.overwritten() != 0)
      fmt::print(stderr,
                 "xprobe: {} events were overwritten in the buffer behind trace and trace_pipe (buffer_size_kb) "
                 "before they were read there (-o or stdout has them)\n",
                 statistics.overwritten());
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

}  // namespace

CommandRunner add_trace_command(CLI::App& app, const std::vector<std::string>& program) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Trace a program with probes written in the kernel's uprobe_events syntax");
  cmd->add_option("-e,--event", options->definitions,
                  "a probe definition in the kernel's uprobe_events syntax; repeatable.\n"
                  "  -e 'p:io/open libc.so.6:open path=+0(%di):string'")
      ->type_name("DEF");
  cmd->add_option("-f,--file", options->files,
                  "a file of probe definitions, one per line ('#' comments); repeatable.\n  -f probes.txt")
      ->type_name("FILE");
  cmd->add_option("--filter", options->filters,
                  "an event's filter in the kernel's grammar (events.rst, \"Event filtering\"): its arguments by name, "
                  "common_pid, comm, cpu; == != < <= > >= & on numbers, == != ~ (glob) on strings, && || ! ( ); "
                  "only hits that pass become events. A definition may also end in 'if EXPR'. Repeatable.\n"
                  "  --filter 'mem/malloc:size >= 4096 && comm ~ \"py*\"'")
      ->type_name("GRP/EVENT:EXPR");
  // Each aggregation option keeps its place among the others: they print in that order.
  auto aggregation = [&](const char* name, trace::SummaryKind kind, const char* help, const char* type) {
    cmd->add_option_function<std::vector<std::string>>(
           name,
           [options, kind](const std::vector<std::string>& values) {
             for (const std::string& value : values) options->aggregations.push_back({kind, value});
           },
           help)
        ->type_name(type);
  };
  aggregation("--hist", trace::SummaryKind::Hist,
              "the kernel's hist trigger on an event (histogram.rst; keys .hex .sym .sym-offset .execname .log2 "
              ".buckets=N, vals with .hex .percent .graph, sort, size, pause/cont/clear, nohitcount), printed as its hist "
              "file; or GRP/EVENT:FIELD[:KEY] for bpftrace's hist() of a field. The event's hits are aggregated instead "
              "of printed (inside the program for jump-optimized probes). Repeatable.\n"
              "  --hist 'mem/malloc:hist:keys=size.log2:sort=size'   --hist 'mem/malloc:size'",
              "GRP/EVENT:hist:...|GRP/EVENT:FIELD[:KEY]");
  aggregation("--count", trace::SummaryKind::Count, "bpftrace's count() of an event's hits, by KEY if given.\n  --count 'mem/malloc:comm'",
              "GRP/EVENT[:KEY]");
  aggregation("--lhist", trace::SummaryKind::Lhist, "bpftrace's lhist(): linear buckets of a field.\n  --lhist 'mem/malloc:size:0:4096:512'",
              "GRP/EVENT:FIELD:MIN:MAX:STEP");
  aggregation("--sum", trace::SummaryKind::Sum, "bpftrace's sum() of a field, by KEY if given.\n  --sum 'io/read:count:comm'",
              "GRP/EVENT:FIELD[:KEY]");
  aggregation("--avg", trace::SummaryKind::Avg, "bpftrace's avg() of a field.\n  --avg 'mem/malloc:size'", "GRP/EVENT:FIELD[:KEY]");
  aggregation("--min", trace::SummaryKind::Min, "bpftrace's min() of a field.\n  --min 'mem/malloc:size'", "GRP/EVENT:FIELD[:KEY]");
  aggregation("--max", trace::SummaryKind::Max, "bpftrace's max() of a field.\n  --max 'mem/malloc:size'", "GRP/EVENT:FIELD[:KEY]");
  aggregation("--latency", trace::SummaryKind::Latency,
              "the time from entry to return of a return probe's calls, as bcc's funclatency prints it (log2 rows "
              "in nsecs), by KEY if given (an argument, common_pid, comm).\n  --latency 'io/read_ret'",
              "GRP/EVENT[:KEY]");
  cmd->add_option("--interval", options->interval, "print the aggregations every SECONDS too (not only at the end).\n  --interval 1")
      ->type_name("SECONDS")
      ->check(CLI::Range(1u, 86400u));
  cmd->add_flag("--clear", options->clear, "with --interval: empty the aggregations after each print.\n  --interval 1 --clear");
  cmd->add_option("-p,--pid", options->pids,
                  "attach to this running process (every thread) instead of starting one; repeatable: one session "
                  "traces them all, each definition in every one that maps its object, each event with its own "
                  "pid; xprobe ends when all of them are gone.\n"
                  "  -p $(pidof nginx)   -p 1234 -p 5678")
      ->type_name("PID");
  cmd->add_option("-o,--output", options->output, "write the events to this file (default: stdout); with --format ctf, the trace directory.\n  -o trace.txt")
      ->type_name("FILE");
  std::vector<std::string> format_names;
  std::string format_help = "the events' format:";
  for (const trace::OutputFormat& format : trace::output_formats()) {
    format_names.emplace_back(format.name);
    format_help += fmt::format(" {} ({});", format.name, format.description);
  }
  format_help += " ctf needs -o DIR (the trace directory).\n  --format json";
  cmd->add_option("--format", options->format, format_help)
      ->check(CLI::IsMember(format_names))
      ->type_name("FORMAT");
  const std::map<std::string, session::EngineChoice> engines{
      {"auto", session::EngineChoice::Auto}, {"trap", session::EngineChoice::Trap}, {"jump", session::EngineChoice::Jump}};
  cmd->add_option("--engine", options->engine,
                  "auto (the default: jump-optimized probes where proven safe, breakpoints elsewhere), trap "
                  "(breakpoints only), or jump (refuse to start unless every probe can be a jump, and say why).\n"
                  "  --engine trap")
      ->transform(CLI::CheckedTransformer(engines))
      ->option_text("auto|trap|jump");
  cmd->add_flag("--summary", options->summary, "print a table of hits, misses and drops per probe at the end.\n  --summary");
  cmd->add_flag("--follow-fork", options->follow_fork,
                "trace forked children too (default: they carry no probe).\n  --follow-fork -- make -j4");
  cmd->add_flag("--no-irq-info", options->no_irq_info,
                "omit the flags column, as with the kernel's options/irq-info=0.\n  --no-irq-info");
  cmd->add_flag("--ctl", options->control_socket,
                "serve a control socket: `xprobe ctl` adds, removes, enables and disables probes while tracing, lists "
                "them, reads their counts and streams the events (then -e and -f may be left out; a probe added there "
                "starts disabled, as in tracefs).\n  --ctl -p 1234");
  cmd->add_option("--control", options->control_mount,
                  "mount the kernel's tracefs interface at DIR (FUSE): uprobe_events, events/.../enable, format, filter, "
                  "trace, trace_pipe, uprobe_profile, error_log, tracing_on, buffer_size_kb work with echo and cat as in "
                  "/sys/kernel/tracing; unmounted when tracing ends.\n  --control /tmp/xt -p 1234")
      ->type_name("DIR");
  cmd->add_option("--buffer-size-kb", options->buffer_size_kb,
                  "with --ctl or --control: the in-memory event buffer that trace and trace-pipe read (the oldest events are "
                  "overwritten when it is full, counted and said at the end; -o still gets them).\n  --buffer-size-kb 4096")
      ->check(CLI::Range(1u, 1u << 22));
  cmd->footer(
      "After --: the program to start and its arguments (passed to it untouched).\n\n"
      "Examples:\n"
      "  xprobe trace -e 'p:io/open libc.so.6:open path=+0(%di):string' -- cat /etc/hostname\n"
      "  xprobe trace -p 1234 -e 'p:mem/malloc libc.so.6:malloc size=%di:u64'\n"
      "  xprobe trace -e 'r:io/open_ret libc.so.6:open%return fd=$retval:s32' -- ./sample\n"
      "  xprobe trace -e 'p libc.so.6:*alloc' -o allocs.txt -- ls\n"
      "  xprobe trace -e 'p:bank/deposit Account::deposit amount=%si:s64' -- ./accounts\n"
      "  xprobe trace --format json -e 'p:demo/fib fib n=%di:s64' -- ./sample\n"
      "  xprobe trace --format perfetto -o fib.json -e 'p:demo/fib fib' -e 'r:demo/fib_ret fib%return' -- ./sample\n"
      "  xprobe trace --format ctf -o fib.ctf -e 'p:demo/fib fib n=%di:s64' -- ./sample && babeltrace2 fib.ctf\n"
      "  xprobe trace -e 'p:demo/fib fib n=%di:s64' --filter 'demo/fib:n > 2' -- ./sample\n"
      "  xprobe trace -e 'p:demo/fib fib n=%di:s64' --hist 'demo/fib:hist:keys=n:sort=n' -- ./sample\n"
      "  xprobe trace -e 'r:demo/fib_ret fib%return' --latency demo/fib_ret -- ./sample\n"
      "  xprobe trace --ctl -p 1234    (then: xprobe ctl add 'p:app/work ./app:work'; xprobe ctl enable app/work)\n"
      "Definitions: see man xprobe (DEFINITIONS) or the kernel's Documentation/trace/uprobetracer.rst.");
  return [cmd, options, &program]() {
    if (!cmd->parsed()) return -1;
    return run_trace(*options, program);
  };
}

}  // namespace xprobe::cli
