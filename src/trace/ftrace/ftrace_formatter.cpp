#include "trace/ftrace/ftrace_formatter.h"

#include <fmt/format.h>

#include <iterator>
#include <sstream>

namespace xprobe::trace {

std::string ftrace_header(uint64_t entries_in_buffer, uint64_t entries_written, unsigned cpus,
                          const FtraceOptions& options) {
  std::string out = fmt::format("# tracer: nop\n#\n# entries-in-buffer/entries-written: {}/{}   #P:{}\n#\n",
                                entries_in_buffer, entries_written, cpus);
  if (options.irq_info) {
    out +=
        "#                                _-----=> irqs-off/BH-disabled\n"
        "#                               / _----=> need-resched\n"
        "#                              | / _---=> hardirq/softirq\n"
        "#                              || / _--=> preempt-depth\n"
        "#                              ||| / _-=> migrate-disable\n"
        "#                              |||| /     delay\n"
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
        "#              | |         |   |||||     |         |\n";
  } else {
    out +=
        "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
        "#              | |         |         |         |\n";
  }
  return out;
}

std::string format_timestamp(uint64_t timestamp_ns) {
  const uint64_t micros = (timestamp_ns + 500) / 1000;
  return fmt::format("{:5}.{:06}", micros / 1000000, micros % 1000000);
}

std::string format_ftrace_event(const EventRecord& record, const EventCatalog& catalog, const Symbolizer& symbolizer,
                                const FtraceOptions& options) {
  const EventDescription* description = record.probe_id < catalog.size() ? &catalog[record.probe_id] : nullptr;
  std::string out;
  out.reserve(128);
  auto inserter = std::back_inserter(out);
  const uint64_t micros = (record.timestamp_ns + 500) / 1000;
  fmt::format_to(inserter, "{:>16}-{:<7} [{:03}] {}{:5}.{:06}: ", record.comm, record.tid, record.cpu,
                 options.irq_info ? "..... " : " ", micros / 1000000, micros % 1000000);
  if (description) out += description->event;
  else fmt::format_to(inserter, "probe{}", record.probe_id);
  const auto append_where = [&](uint64_t address, bool name_only) {
    if (options.symbolic_addresses && symbolizer) {
      if (auto text = symbolizer(address)) {
        out += name_only ? text->substr(0, text->find('+')) : *text;
        return;
      }
    }
    fmt::format_to(std::back_inserter(out), "0x{:x}", address);
  };
  out += ": (";
  append_where(record.address, false);
  if (record.function_address) {
    out += " <- ";
    append_where(*record.function_address, true);
  }
  out += ')';
  for (size_t i = 0; i < record.values.size(); ++i) {
    out += ' ';
    if (description && i < description->argument_names.size()) out += description->argument_names[i];
    else fmt::format_to(std::back_inserter(out), "arg{}", i + 1);
    out += '=';
    append_value(out, record.values[i], symbolizer);
  }
  out += '\n';
  return out;
}

std::string ftrace_stream_header(unsigned cpus, const FtraceOptions& options) {
  const std::string full = ftrace_header(0, 0, cpus, options);
  std::string out;
  std::istringstream lines(full);
  std::string line;
  bool skip_next_hash = false;
  while (std::getline(lines, line)) {
    if (line.rfind("# entries-in-buffer", 0) == 0) {
      skip_next_hash = true;
      continue;
    }
    if (skip_next_hash && line == "#") {
      skip_next_hash = false;
      continue;
    }
    skip_next_hash = false;
    out += line;
    out += '\n';
  }
  return out;
}

namespace {

class FtraceWriter final : public EventWriter {
 public:
  explicit FtraceWriter(const FormatContext& context) : context_(context) { options_.irq_info = context.irq_info; }
  std::string begin() override { return ftrace_stream_header(context_.cpus, options_); }
  void write(const EventRecord& record, std::string& out) override {
    out += format_ftrace_event(record, context_.catalog, context_.symbolizer, options_);
  }

 private:
  FormatContext context_;
  FtraceOptions options_;
};

}  // namespace

std::unique_ptr<EventWriter> make_ftrace_writer(const FormatContext& context) {
  return std::make_unique<FtraceWriter>(context);
}

}  // namespace xprobe::trace
