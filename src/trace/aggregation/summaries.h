#pragma once
// Summaries for people who do not speak triggers, printed as bpftrace prints its maps:
//   --count GRP/EVENT[:KEY]            @EVENT[KEY]: N            (bpftrace's count())
//   --hist GRP/EVENT:FIELD[:KEY]       power-of-two buckets with bpftrace's @ bars (hist())
//   --lhist GRP/EVENT:FIELD:MIN:MAX:STEP   linear buckets (lhist())
//   --sum / --avg / --min / --max GRP/EVENT:FIELD[:KEY]
// and the latency of a return probe's calls, printed as bcc's funclatency prints them:
//   --latency GRP/EVENT[:KEY]          log2 rows "[lo -> hi] : count |****|" per key
// KEY and FIELD are the event's fields (its arguments, common_pid, comm, cpu, ...).
#include <cstdint>
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

enum class SummaryKind : uint8_t { Count, Hist, Lhist, Sum, Avg, Min, Max, Latency };

struct SummarySpec {
  SummaryKind kind = SummaryKind::Count;
  std::string event;  // GRP/EVENT as given
  std::string text;   // the option's value, for messages
  std::optional<probe::filter::FilterField> field;  // what is measured (not for Count, Latency)
  std::optional<probe::filter::FilterField> key;
  int64_t min = 0, max = 0, step = 1;  // Lhist
};

// The event named by a summary option's value ("GRP/EVENT" before the first ':').
std::string summary_event(std::string_view text);
// `text` is the option's value; `event` the event it names.
Result<SummarySpec> parse_summary(SummaryKind kind, std::string_view text, const EventDescription& event);

class Summary {
 public:
  explicit Summary(SummarySpec spec) : spec_(std::move(spec)) {}
  const SummarySpec& spec() const { return spec_; }
  // Latency: `latency_ns` is the call's time from entry to return.
  void add(const EventRecord& record, bool is_return, uint64_t latency_ns = 0);
  // What the agent's table of this summary gained (trace/aggregation/agent_aggregation.h).
  void add_aggregated(const probe::AggregationUpdate& update);
  void clear() {
    entries_.clear();
    dropped_ = 0;
  }
  std::string format() const;
  // The summary as counters (output_format.h): track @MAP (with [KEY] for a histogram's key;
  // "latency GRP/EVENT" for --latency), a series per key (a number's "value" without one) or
  // per bucket, named as format() labels them.
  std::vector<CounterSample> counters() const;

 private:
  struct Key {
    int64_t number = 0;
    std::string text;
    auto operator<=>(const Key&) const = default;
  };
  struct Entry {
    int64_t count = 0;
    int64_t sum = 0;
    int64_t min = 0;
    int64_t max = 0;
    std::map<int, uint64_t> buckets;  // Hist, Lhist, Latency: bucket index -> count
  };
  std::string key_text(const Key& key) const;
  std::string map_name() const;
  std::string bucket_label(int index) const;  // as format() prints a bucket
  std::string format_buckets(const Entry& entry) const;
  std::string format_latency(const Entry& entry) const;
  int bucket_of(int64_t value, uint64_t latency_ns) const;
  void fold(Entry& entry, int bucket, uint64_t count, int64_t sum, int64_t min, int64_t max);
  SummarySpec spec_;
  std::map<Key, Entry> entries_;
  uint64_t dropped_ = 0;  // hits of keys the agent's table had no room for
};

// bpftrace's hist() bucket of a value: 0 for negatives, 1 for 0, 2 + floor(log2(v)) above.
int log2_bucket(int64_t value);
// bcc's bpf_log2l(): 0 for 0, 1 + floor(log2(v)) above.
int funclatency_bucket(uint64_t value);

}  // namespace xprobe::trace
