#pragma once
// Each subcommand's options, as the command line (command_line.cpp, the one file that knows
// CLI11) fills them, and the function that runs it: its exit status.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "session/trace_session.h"

namespace xprobe::cli {

struct CheckOptions {
  std::string file;
  std::string place;
  std::string arch;
};

struct CtlOptions {
  pid_t session = 0;
  std::vector<std::string> words;  // the request: VERB [ARGUMENT...]
};

struct DecodeOptions {
  std::string file;
  std::string symbol;
  std::string raw_file;
  std::string hex;
  std::string arch;
};

struct ListOptions {
  std::string binary;
  int pid = 0;
  std::optional<std::string> functions;
  std::string lines;
  std::string vars;
  std::optional<std::string> sdt;
};

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

int run_check(const CheckOptions& options);
int run_ctl(const CtlOptions& options);
int run_decode(const DecodeOptions& options);
int run_list(const ListOptions& options);
// `program` is the traced command line (what follows "--").
int run_trace(const TraceOptions& options, const std::vector<std::string>& program);

}  // namespace xprobe::cli
