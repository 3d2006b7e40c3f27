#pragma once
// The kernel's hist trigger on an event (Documentation/trace/histogram.rst):
//   hist:keys=K[,K2...][:vals=V[,V2...]][:sort=F[.descending][,F2]][:size=N][:pause][:cont][:clear]
// keys are fields of the event (its arguments, common_pid, comm, cpu, __probe_ip, ...) with the
// modifiers .hex .sym .sym-offset .execname .log2 .buckets=N; vals are numeric fields summed
// per key, besides the hitcount every entry has; sort names a key, a val or hitcount. The
// table prints exactly as the kernel's events/GRP/EVENT/hist file does.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/agent_aggregation.h"
#include "probe/filter/event_filter.h"
#include "support/result.h"
#include "trace/event_record.h"
#include "trace/output_format.h"

namespace xprobe::trace {

struct HistField {
  enum class Modifier : uint8_t { None, Hex, Sym, SymOffset, Execname, Log2, Buckets, Percent, Graph };  // the last two: values
  std::string name;
  Modifier modifier = Modifier::None;
  uint64_t buckets = 0;  // Modifier::Buckets
  probe::filter::FilterField field;
  // The key common_stacktrace (or stacktrace, its older name): the thread's user stack at the
  // hit (EventRecord::user_stack), printed one frame a line as the kernel prints a stack key.
  bool stacktrace = false;
};

struct HistSortKey {
  std::string name;  // "hitcount", or a key's or a val's field name
  bool descending = false;
};

struct HistSpec {
  std::vector<HistField> keys;
  std::vector<HistField> vals;  // besides hitcount
  HistField::Modifier hitcount_modifier = HistField::Modifier::None;  // hitcount.percent, hitcount.graph
  bool no_hitcount = false;  // :nohitcount (at least one other value then)
  std::vector<HistSortKey> sort;  // default: hitcount, ascending
  unsigned size = 2048;           // entries at most (rounded up to a power of two)
  bool paused = false;
  // :pause, :cont and :clear act on an existing trigger with the same keys, values, sort and
  // filter (the kernel's hist_register_trigger()); a new trigger with :pause starts paused, and
  // :cont or :clear without an existing one is refused.
  enum class Command : uint8_t { None, Pause, Cont, Clear };
  Command command = Command::None;
  bool same_trigger(const HistSpec& other) const;
  std::string filter;  // "if EXPR" after the trigger, as the kernel writes it
  // The trigger as the kernel prints it on its "trigger info" line.
  std::string describe() const;
};

// `text` starts with "hist:" (the event's fields are those of `event`).
Result<HistSpec> parse_hist_trigger(std::string_view text, const EventDescription& event);

// The table of one event's hist trigger: filled by events, printed like the kernel's hist file.
class HistTable {
 public:
  using Symbolize = std::function<std::string(uint64_t address, bool with_offset)>;
  // `event`: the event the trigger is on (its filter's fields).
  HistTable(HistSpec spec, const EventDescription& event);
  const HistSpec& spec() const { return spec_; }
  // A key is common_stacktrace: each event needs its thread's stack.
  bool needs_stack() const;
  void add(const EventRecord& record, bool is_return);
  // What the agent's table of this trigger gained (trace/aggregation/agent_aggregation.h).
  void add_aggregated(const probe::AggregationUpdate& update);
  void clear();
  void set_paused(bool paused) { spec_.paused = paused; }
  // "# event histogram" ... "Totals:" as the kernel's events/GRP/EVENT/hist shows it.
  std::string format(const Symbolize& symbolize) const;
  // The table as counters (output_format.h): track "NAME hitcount" and "NAME VAL" for each
  // value, a series per entry, named by its key ("n=3", "ptr=main+0x1d", "size=2^4").
  std::vector<CounterSample> counters(const std::string& name, const Symbolize& symbolize) const;

 private:
  struct KeyPart {
    uint64_t number = 0;
    std::string text;  // string keys; .execname: the thread's name at its first hit
    std::vector<uint64_t> frames;  // common_stacktrace
    auto operator<=>(const KeyPart&) const = default;
  };
  struct Entry {
    uint64_t hitcount = 0;
    std::vector<uint64_t> sums;
    std::vector<std::string> execnames;
  };
  HistSpec spec_;
  std::optional<probe::filter::EventFilter> filter_;  // the trigger's own `if`
  std::map<std::vector<KeyPart>, Entry> entries_;
  uint64_t hits_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace xprobe::trace
