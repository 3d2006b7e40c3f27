// The command line: every subcommand's options and help, parsed by CLI11. The only file that
// includes CLI11: its header costs each file that includes it seconds of compile time.
#include "cli/command_line.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace xprobe::cli {
namespace {

// Runs the subcommand when the command line chose it; -1 when it did not.
using CommandRunner = std::function<int()>;

CommandRunner add_check_command(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check", "Check with the instruction decoder whether a probe point is safe");
  cmd->add_option("FILE", options->file, "the ELF file.\n  /usr/bin/gzip")->required();
  cmd->add_option("PLACE", options->place, "SYMBOL[+|-OFFS] or 0xADDR.\n  main+4")->required();
  cmd->add_option("--arch", options->arch, "x86_64, i386 or aarch64 (default: from the ELF header).\n  --arch i386")
      ->type_name("ARCH");
  cmd->footer("Exit status 0 when the probe point is accepted, 1 otherwise.\n\nExample:\n  xprobe check /usr/bin/gzip main+4");
  return [cmd, options]() { return cmd->parsed() ? run_check(*options) : -1; };
}


CommandRunner add_ctl_command(CLI::App& app) {
  auto options = std::make_shared<CtlOptions>();
  CLI::App* cmd = app.add_subcommand("ctl", "Control a live `xprobe trace --ctl` session: add, remove, enable and "
                                            "disable probes, list them, read their counts, stream the events");
  cmd->add_option("--session", options->session,
                  "the session (its xprobe's pid, as `xprobe ctl list-sessions` shows); needed when several run.\n"
                  "  --session 4242");
  cmd->add_option("request", options->words,
                  "add DEF | remove [GRP/]EVENT | clear | enable [EVENT] | disable [EVENT] | list | stats | "
                  "trace-pipe | list-sessions (EVENT: GRP/EVENT, GRP/ or EVENT; none: every event)")
      ->expected(-1);
  cmd->footer(
      "Examples:\n"
      "  xprobe ctl add 'p:app/work /usr/bin/app:work n=%di:s32'\n"
      "  xprobe ctl enable app/work\n"
      "  xprobe ctl trace-pipe\n"
      "  xprobe ctl disable app/\n"
      "  xprobe ctl remove app/work\n"
      "  xprobe ctl stats\n"
      "The protocol (one line per request, usable with socat): man xprobe, CONTROL PROTOCOL.");
  return [cmd, options]() {
    if (!cmd->parsed()) return -1;
    return run_ctl(*options);
  };
}


CommandRunner add_decode_command(CLI::App& app) {
  auto options = std::make_shared<DecodeOptions>();
  CLI::App* cmd = app.add_subcommand("decode", "Print every instruction of an ELF file's executable sections (or one function)");
  cmd->add_option("FILE", options->file, "the ELF file.\n  /bin/true");
  cmd->add_option("SYMBOL", options->symbol, "decode only this function.\n  main");
  cmd->add_option("--raw", options->raw_file, "decode a flat file of bytes at address 0.\n  --raw code.bin")->type_name("FILE");
  cmd->add_option("--hex", options->hex, "decode bytes given as hex.\n  --hex \"48 8d 15 db ff ff ff\"")->type_name("BYTES");
  cmd->add_option("--arch", options->arch,
                  "x86_64, i386 or aarch64 (default: from the ELF header; x86_64 for raw bytes).\n  --arch aarch64")
      ->type_name("ARCH");
  cmd->footer("Output: ADDRESS BYTES LENGTH KIND [TARGET], one line per instruction.\n\nExamples:\n"
              "  xprobe decode /bin/true main\n  xprobe decode --arch i386 --hex \"06 60 e8 00 00 00 00 c3\"");
  return [cmd, options]() { return cmd->parsed() ? run_decode(*options) : -1; };
}


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

}  // namespace

int run_command_line(int argc, char** argv) {
  CLI::App app{"xprobe: probe-based event tracer for Linux processes"};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  xprobe trace -e 'p:io/open libc.so.6:open path=+0(%di):string' -- cat /etc/hostname\n"
      "  xprobe check /usr/bin/gzip main+4\n"
      "  xprobe decode /bin/true main\n"
      "  xprobe trace --ctl -p 1234, then xprobe ctl add|enable|disable|remove|list|stats|trace-pipe\n"
      "Each command has its own --help (xprobe trace --help); the manual: man xprobe.");
  std::vector<CommandRunner> commands;
  commands.push_back(add_decode_command(app));
  commands.push_back(add_check_command(app));
  commands.push_back(add_list_command(app));
  commands.push_back(add_ctl_command(app));
  std::vector<std::string> program;  // everything after the first "--": the traced program's argv, untouched
  commands.push_back(add_trace_command(app, program));
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

}  // namespace xprobe::cli
