#pragma once
// Output formats of events, behind one interface, and the registry that lists them. A format
// lives in src/trace/<name>/ and is made known by one line in output_formats.cpp; the command
// offers every registered name for --format, the session uses whichever it is given.
//
// A writer turns records into bytes. The output (event_output.h) writes each event's bytes
// whole or counts the event as dropped, so a writer appends one complete event per write().
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "trace/event_record.h"
#include "trace/value_format.h"

namespace xprobe::trace {

// What every writer may know about the session it writes for.
struct FormatContext {
  // Grows while tracing (probes planted when a library loads, after an exec); a record's
  // probe_id indexes it.
  const EventCatalog& catalog;
  Symbolizer symbolizer;  // the traced process's addresses -> symbol+offset
  bool irq_info = true;   // ftrace's flags column (the kernel's options/irq-info)
  unsigned cpus = 1;      // CPUs online
};

class EventWriter {
 public:
  virtual ~EventWriter() = default;
  // What comes before the first event (a header), if anything.
  virtual std::string begin() { return {}; }
  // One event, appended to `out`.
  virtual void write(const EventRecord& record, std::string& out) = 0;
  // What comes after the last event, if anything.
  virtual std::string end() { return {}; }
};

struct OutputFormat {
  std::string_view name;         // as given to --format
  std::string_view description;  // one line for --help
  std::unique_ptr<EventWriter> (*make)(const FormatContext& context);
};

// Every format, the default (ftrace) first.
std::span<const OutputFormat> output_formats();
const OutputFormat& default_output_format();
// nullptr for a name no format has.
const OutputFormat* find_output_format(std::string_view name);

}  // namespace xprobe::trace
