#pragma once
// Output formats of events, behind one interface, and the registry that lists them. A format
// lives in src/trace/<name>/ and is made known by one line in output_formats.cpp; the command
// offers every registered name for --format, the session uses whichever it is given.
//
// A writer turns records into bytes. The output (event_output.h) writes each event's bytes
// whole or counts the event as dropped, so a writer appends one complete event per write().
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "support/result.h"
#include "trace/event_record.h"
#include "trace/value_format.h"

namespace xprobe::trace {

// The process a thread belongs to and that process's name, as the system tells them when
// asked; nullopt when it cannot say (the thread is gone).
struct ThreadProcess {
  int32_t pid = 0;
  std::string name;
};
using ProcessOfThread = std::function<std::optional<ThreadProcess>(int32_t tid)>;

// What every writer may know about the session it writes for.
struct FormatContext {
  // Grows while tracing (probes planted when a library loads, after an exec); a record's
  // probe_id indexes it.
  const EventCatalog& catalog;
  Symbolizer symbolizer;  // the traced process's addresses -> symbol+offset
  bool irq_info = true;   // ftrace's flags column (the kernel's options/irq-info)
  unsigned cpus = 1;      // CPUs online
  ProcessOfThread process_of = {};   // empty: a thread is taken as its own process, named by its comm
  std::string directory = {};        // formats that write a directory (OutputFormat::prepare_directory): -o
};

// An aggregation's value at one moment, for the formats with counter tracks: `track` names a
// counter track (an aggregation, or one of its values), `series` one line of it (a key, a
// bucket).
struct CounterSample {
  std::string track;
  std::string series;
  int64_t value = 0;
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
  // A writer of its own files (a directory format): what went wrong writing them, "" if nothing.
  virtual std::string failure() const { return {}; }
  // The aggregations at `timestamp_ns` (CLOCK_MONOTONIC, as the events) as counters of
  // `process`, appended to `out` (formats with OutputFormat::counters; others ignore them).
  virtual void write_counters(uint64_t /*timestamp_ns*/, const ThreadProcess& /*process*/,
                              std::span<const CounterSample> /*samples*/, std::string& /*out*/) {}
};

struct OutputFormat {
  std::string_view name;         // as given to --format
  std::string_view description;  // one line for --help
  std::unique_ptr<EventWriter> (*make)(const FormatContext& context);
  // nullptr: the events are a stream of bytes (stdout or the -o file). Else the format writes
  // a directory of its own files, the -o path, which this makes ready first; its writer
  // appends nothing to the stream.
  Status (*prepare_directory)(const std::string& path);
  // Its output is lines of text that the aggregations' tables can join (not a JSON document
  // or a binary trace).
  bool text_lines;
  // It holds the aggregations as counters instead (EventWriter::write_counters).
  bool counters;
};

// Every format, the default (ftrace) first.
std::span<const OutputFormat> output_formats();
const OutputFormat& default_output_format();
// nullptr for a name no format has.
const OutputFormat* find_output_format(std::string_view name);

}  // namespace xprobe::trace
