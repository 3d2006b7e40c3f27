#include "trace/perfetto/trace_event_writer.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "trace/json/json_formatter.h"

namespace xprobe::trace {
namespace {

// Microseconds with the nanoseconds kept: "441094151.000".
std::string microseconds(uint64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

class TraceEventWriter final : public EventWriter {
 public:
  explicit TraceEventWriter(const FormatContext& context) : context_(context) {}

  std::string begin() override { return "["; }

  void write(const EventRecord& record, std::string& out) override {
    Thread& thread = thread_of(record, out);
    thread.last_ns = std::max(thread.last_ns, record.timestamp_ns);
    const EventDescription* description = describe(record.probe_id);
    const std::string name = description ? description->event : fmt::format("probe{}", record.probe_id);
    const std::string category = description ? description->group : "xprobe";
    if (description && description->is_return && record.function_address) {
      if (close_slice(thread, record, *record.function_address, out)) return;
    } else if (opens_slice(record.probe_id) && thread.open.size() < kMaxOpenSlicesPerThread) {
      thread.open.push_back(OpenSlice{record.address, name, category});
      append_event(out, thread, name, category, "\"B\"", args_of(record, description));
      return;
    }
    append_event(out, thread, name, category, "\"i\",\"s\":\"t\"", args_of(record, description));
  }

  // One "C" event per track, its series as the arguments. A series a track had before and
  // not now (a --clear'ed key without hits) is written as 0, or the track would show its old
  // value on.
  void write_counters(uint64_t timestamp_ns, const ThreadProcess& process, std::span<const CounterSample> samples,
                      std::string& out) override {
    if (named_processes_.insert(process.pid).second) {
      Thread named;
      named.pid = named.tid = process.pid;
      append_metadata(out, named, "process_name", process.name);
    }
    counter_ns_ = std::max(counter_ns_, timestamp_ns);
    std::map<std::string, std::map<std::string, int64_t>> tracks;
    for (const CounterSample& sample : samples) tracks[sample.track][sample.series] = sample.value;
    for (auto& [track, known] : counter_series_)
      if (!tracks.count(track))
        for (const std::string& series : known) tracks[track][series] = 0;
    for (auto& [track, series] : tracks) {
      std::set<std::string>& known = counter_series_[track];
      for (const std::string& name : known) series.try_emplace(name, 0);
      std::string args = "{";
      for (const auto& [name, value] : series) {
        known.insert(name);
        if (args.size() > 1) args += ',';
        args += json_quote(name) + ":" + std::to_string(value);
      }
      separate(out);
      out += fmt::format("{{\"name\":{},\"cat\":\"xprobe\",\"ph\":\"C\",\"ts\":{},\"pid\":{},\"tid\":{},\"args\":{}}}}}",
                         json_quote(track), microseconds(counter_ns_), process.pid, process.pid, args);
    }
  }

  std::string end() override {
    std::string out;
    for (auto& [tid, thread] : threads_)
      while (!thread.open.empty()) close_top(thread, "{}", out);
    out += "\n]\n";
    return out;
  }

 private:
  struct OpenSlice {
    uint64_t function = 0;  // the entry's address: a return with this function closes it
    std::string name;
    std::string category;
  };
  struct Thread {
    int32_t tid = 0;
    int32_t pid = 0;
    std::string comm;  // as last named
    uint64_t last_ns = 0;
    std::vector<OpenSlice> open;  // innermost last
  };

  const EventDescription* describe(uint32_t probe_id) const {
    return probe_id < context_.catalog.size() ? &context_.catalog[probe_id] : nullptr;
  }

  // An entry probe whose probe point also has a return probe: its calls are slices.
  bool opens_slice(uint32_t probe_id) {
    if (opens_slice_.size() != context_.catalog.size()) {  // the catalog grew: probes were added
      opens_slice_.assign(context_.catalog.size(), false);
      std::set<std::pair<std::string, std::string>> returned;
      for (const EventDescription& event : context_.catalog)
        if (event.is_return) returned.emplace(event.binary, event.probe_point);
      for (size_t i = 0; i < context_.catalog.size(); ++i) {
        const EventDescription& event = context_.catalog[i];
        opens_slice_[i] = !event.is_return && returned.count({event.binary, event.probe_point}) != 0;
      }
    }
    return probe_id < opens_slice_.size() && opens_slice_[probe_id];
  }

  // The thread's state; names its process and itself first when they are new to the trace.
  Thread& thread_of(const EventRecord& record, std::string& out) {
    auto [at, is_new] = threads_.try_emplace(record.tid);
    Thread& thread = at->second;
    if (is_new) {
      thread.tid = record.tid;
      thread.pid = record.tid;
      std::string process_name = record.comm;
      if (context_.process_of) {
        if (const auto process = context_.process_of(record.tid)) {
          thread.pid = process->pid;
          process_name = process->name;
        }
      }
      if (named_processes_.insert(thread.pid).second)
        append_metadata(out, thread, "process_name", process_name);
    }
    if (is_new || thread.comm != record.comm) {
      thread.comm = record.comm;
      append_metadata(out, thread, "thread_name", record.comm);
    }
    return thread;
  }

  // A return: closes its function's innermost open slice and those above it; false when the
  // thread has no open slice of that function (its entry was before tracing or not a slice).
  bool close_slice(Thread& thread, const EventRecord& record, uint64_t function, std::string& out) {
    size_t at = thread.open.size();
    while (at > 0 && thread.open[at - 1].function != function) --at;
    if (at == 0) return false;
    while (thread.open.size() > at) close_top(thread, "{}", out);
    close_top(thread, args_of(record, describe(record.probe_id)), out);
    return true;
  }

  void close_top(Thread& thread, const std::string& args, std::string& out) {
    const OpenSlice slice = std::move(thread.open.back());
    thread.open.pop_back();
    append_event(out, thread, slice.name, slice.category, "\"E\"", args);
  }

  std::string args_of(const EventRecord& record, const EventDescription* description) const {
    std::string args = "{";
    for (size_t i = 0; i < record.values.size(); ++i) {
      const std::string name = description && i < description->argument_names.size()
                                   ? description->argument_names[i]
                                   : fmt::format("arg{}", i + 1);
      if (i != 0) args += ',';
      args += json_quote(name) + ":" + json_value(record.values[i], context_.symbolizer);
    }
    return args + "}";
  }

  void separate(std::string& out) {
    out += first_ ? "\n" : ",\n";
    first_ = false;
  }

  void append_event(std::string& out, const Thread& thread, const std::string& name, const std::string& category,
                    std::string_view phase, const std::string& args) {
    separate(out);
    out += fmt::format("{{\"name\":{},\"cat\":{},\"ph\":{},\"ts\":{},\"pid\":{},\"tid\":{},\"args\":{}}}", json_quote(name),
                       json_quote(category), phase, microseconds(thread.last_ns), thread.pid, thread.tid, args);
  }

  void append_metadata(std::string& out, const Thread& thread, std::string_view what, const std::string& name) {
    separate(out);
    out += fmt::format("{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", what, thread.pid,
                       thread.tid, json_quote(name));
  }

  FormatContext context_;
  std::map<int32_t, Thread> threads_;  // by tid: end() closes them in a stable order
  std::set<int32_t> named_processes_;
  std::vector<bool> opens_slice_;  // by probe id, for the catalog's current size
  std::map<std::string, std::set<std::string>> counter_series_;  // every series each counter track had
  uint64_t counter_ns_ = 0;  // the last counters' time: never going back
  bool first_ = true;
};

}  // namespace

std::unique_ptr<EventWriter> make_trace_event_writer(const FormatContext& context) {
  return std::make_unique<TraceEventWriter>(context);
}

}  // namespace xprobe::trace
