#include "trace/ftrace_formatter.h"

#include <fmt/format.h>

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
  std::string out = fmt::format("{:>16}-{:<7} [{:03}] ", record.comm, record.tid, record.cpu);
  if (options.irq_info) out += "..... ";
  else out += ' ';
  out += format_timestamp(record.timestamp_ns);
  out += ": ";
  out += description ? description->event : fmt::format("probe{}", record.probe_id);
  const auto where = [&](uint64_t address, bool name_only) {
    if (options.symbolic_addresses && symbolizer) {
      if (auto text = symbolizer(address)) return name_only ? text->substr(0, text->find('+')) : *text;
    }
    return fmt::format("0x{:x}", address);
  };
  if (record.function_address) {
    out += fmt::format(": ({} <- {})", where(record.address, false), where(*record.function_address, true));
  } else {
    out += fmt::format(": ({})", where(record.address, false));
  }
  for (size_t i = 0; i < record.values.size(); ++i) {
    const std::string name = description && i < description->argument_names.size() ? description->argument_names[i]
                                                                                     : fmt::format("arg{}", i + 1);
    out += fmt::format(" {}={}", name, format_value(record.values[i], symbolizer));
  }
  out += '\n';
  return out;
}

}  // namespace xprobe::trace
