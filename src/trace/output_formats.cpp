// The registry of output formats. To add one: its writer in src/trace/<name>/, its sources in
// src/trace/CMakeLists.txt, and one line below.
#include "trace/ctf/ctf_writer.h"
#include "trace/ftrace/ftrace_formatter.h"
#include "trace/json/json_formatter.h"
#include "trace/output_format.h"
#include "trace/perfetto/trace_event_writer.h"

namespace xprobe::trace {
namespace {

constexpr OutputFormat kFormats[] = {
    {"ftrace", "the kernel's trace file: one line per event (the default)", make_ftrace_writer, nullptr, true, false},
    {"json", "JSON lines: one object per event", make_json_writer, nullptr, true, false},
    {"perfetto", "the Trace Event Format JSON for ui.perfetto.dev: slices per thread, aggregations as counters",
     make_trace_event_writer, nullptr, false, true},
    {"chrome", "the same as perfetto (chrome://tracing reads it too)", make_trace_event_writer, nullptr, false, true},
    {"ctf", "a CTF 1.8 trace directory (-o DIR) for babeltrace2 and Trace Compass", make_ctf_writer,
     prepare_ctf_directory, false, false},
};

}  // namespace

std::span<const OutputFormat> output_formats() { return kFormats; }

const OutputFormat& default_output_format() { return kFormats[0]; }

const OutputFormat* find_output_format(std::string_view name) {
  for (const OutputFormat& format : kFormats)
    if (format.name == name) return &format;
  return nullptr;
}

}  // namespace xprobe::trace
