// xprobe trace: start or attach to a program and print its probe events.
#include "cli/commands.h"
#include "cli/trace_session.h"

namespace xprobe::cli {

CommandRunner add_trace_command(CLI::App& app, const std::vector<std::string>& program) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Trace a program with probes written in the kernel's uprobe_events syntax");
  cmd->add_option("-e,--event", options->definitions, "a probe definition, e.g. 'p:grp/ev libc.so.6:open path=+0(%di):string'");
  cmd->add_option("-f,--file", options->files, "a file of probe definitions, one per line ('#' comments)");
  cmd->add_option("-p,--pid", options->pid, "attach to this running process (every thread)");
  cmd->add_option("-o,--output", options->output, "write the events to this file (default: stdout)");
  cmd->add_option("--format", options->format, "ftrace (default) or json (one object per line)")
      ->check(CLI::IsMember({"ftrace", "json"}));
  cmd->add_option("--engine", options->engine,
                  "auto (default: jump-optimized probes where proven safe, breakpoints elsewhere), trap, or jump")
      ->check(CLI::IsMember({"auto", "trap", "jump"}));
  cmd->add_flag("--summary", options->summary, "print a table of hits, misses and drops per probe at the end");
  cmd->add_flag("--follow-fork", options->follow_fork, "trace forked children too (default: they carry no probe)");
  cmd->add_flag("--no-irq-info", options->no_irq_info, "omit the flags column, as with the kernel's options/irq-info=0");
  cmd->footer("After --: the program to start and its arguments (passed to it untouched).");
  return [cmd, options, &program]() {
    if (!cmd->parsed()) return -1;
    options->command = program;
    return run_trace(*options);
  };
}

}  // namespace xprobe::cli
