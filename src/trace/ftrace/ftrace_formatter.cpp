#include "trace/ftrace/ftrace_formatter.h"

#include <fmt/format.h>

#include <cstring>
#include <iterator>
#include <sstream>

#include "trace/number_text.h"

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

namespace {

bool is_ascii(const std::string& text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// `value` at `at`, zero-padded (or space-padded on the left) to `width`; a longer number is
// written whole. Returns the end.
char* write_right_aligned(char* at, uint64_t value, size_t width, char fill) {
  const fmt::format_int digits(value);  // two digits per step from a table
  for (size_t i = digits.size(); i < width; ++i) *at++ = fill;
  std::memcpy(at, digits.data(), digits.size());
  return at + digits.size();
}

// "%16s-%-7d [%03u] ..... %5lu.%06lu: " (the kernel's "%16s-%-7d [%03d] %s %5lu.%06lu: "),
// built in a local buffer and appended once: this runs for every event.
void append_line_prefix(std::string& out, const EventRecord& record, bool irq_info) {
  const uint64_t micros = (record.timestamp_ns + 500) / 1000;
  constexpr size_t kLongestComm = 64;
  if (!is_ascii(record.comm) || record.comm.size() > kLongestComm) {
    // fmt pads by display width (a multi-byte character is one column, some are two), as a
    // terminal shows the kernel's line; byte counting would shift the columns.
    fmt::format_to(std::back_inserter(out), "{:>16}-{:<7} [{:03}] {}{:5}.{:06}: ", record.comm, record.tid, record.cpu,
                   irq_info ? "..... " : " ", micros / 1000000, micros % 1000000);
    return;
  }
  // comm, '-', tid (11), " [", cpu (10), "] ..... ", seconds (20), '.', 6 digits, ": ".
  char line[kLongestComm + 1 + 11 + 2 + 10 + 8 + 20 + 1 + 6 + 2];
  char* at = line;
  for (size_t i = record.comm.size(); i < 16; ++i) *at++ = ' ';
  for (const char c : record.comm) *at++ = c;
  *at++ = '-';
  const char* tid_start = at;
  if (record.tid < 0) *at++ = '-';
  const uint64_t tid_magnitude = record.tid < 0 ? 0 - static_cast<uint64_t>(static_cast<int64_t>(record.tid))
                                                : static_cast<uint64_t>(record.tid);
  at = write_right_aligned(at, tid_magnitude, 0, ' ');
  while (at - tid_start < 7) *at++ = ' ';
  *at++ = ' ';
  *at++ = '[';
  at = write_right_aligned(at, record.cpu, 3, '0');
  for (const char c : std::string_view(irq_info ? "] ..... " : "]  ")) *at++ = c;
  at = write_right_aligned(at, micros / 1000000, 5, ' ');
  *at++ = '.';
  at = write_right_aligned(at, micros % 1000000, 6, '0');
  *at++ = ':';
  *at++ = ' ';
  out.append(line, static_cast<size_t>(at - line));
}

}  // namespace

void append_ftrace_event(std::string& out, const EventRecord& record, const EventCatalog& catalog,
                         const Symbolizer& symbolizer, const FtraceOptions& options) {
  const EventDescription* description = record.probe_id < catalog.size() ? &catalog[record.probe_id] : nullptr;
  append_line_prefix(out, record, options.irq_info);
  if (description) {
    out += description->event;
  } else {
    out += "probe";
    append_decimal(out, static_cast<uint64_t>(record.probe_id));
  }
  const auto append_where = [&](uint64_t address, bool name_only) {
    if (options.symbolic_addresses && symbolizer) {
      if (auto text = symbolizer(address)) {
        out += name_only ? text->substr(0, text->find('+')) : *text;
        return;
      }
    }
    append_hex(out, address);
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
    if (description && i < description->argument_names.size()) {
      out += description->argument_names[i];
    } else {
      out += "arg";
      append_decimal(out, static_cast<uint64_t>(i + 1));
    }
    out += '=';
    append_value(out, record.values[i], symbolizer);
  }
  out += '\n';
}

std::string format_ftrace_event(const EventRecord& record, const EventCatalog& catalog, const Symbolizer& symbolizer,
                                const FtraceOptions& options) {
  std::string out;
  out.reserve(128);
  append_ftrace_event(out, record, catalog, symbolizer, options);
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
    append_ftrace_event(out, record, context_.catalog, context_.symbolizer, options_);
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
