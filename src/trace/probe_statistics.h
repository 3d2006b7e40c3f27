#pragma once
// Per-probe hit and miss counters, bumped on the hit path without locks, and the two ways of
// printing them at exit:
//   - the kernel's uprobe_profile line ("  %s %-44s %15lu"), with the misses column that
//     kprobe_profile has appended ("  PATH EVENT HITS MISSES"): HITS counts every hit, as the
//     kernel's nhit does, MISSES those of them whose event was lost;
//   - a --summary table that keeps the two apart: RECORDED (hits whose event was written)
//     and MISSED (hits whose event was lost), one row per probe point with its function, and
//     how many events were dropped, so that no event is ever lost silently; for return
//     probes whose calls were given up without a return (UNWOUND), a column of those.
// A miss is a hit whose event could not be recorded (arguments not fetched, ring full,
// output failed); the counters count every hit, so recorded = hits - misses.
#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "trace/event_record.h"

namespace xprobe::trace {

struct ProbeCounters {
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> filtered{0};  // hits the event's filter turned away (no event, by design)
  // Return probes: entries whose frame was given up without a return being seen. A longjmp or
  // an exception unwound the call (it never returns), or the thread went on on another stack
  // (coroutines, a signal stack) and the call may return unseen later: by stack pointer the
  // two look alike. Not hits of the return probe: counted so that none is lost silently.
  std::atomic<uint64_t> unwound{0};
  void hit() { hits.fetch_add(1, std::memory_order_relaxed); }
  void miss() { misses.fetch_add(1, std::memory_order_relaxed); }
  void filter() { filtered.fetch_add(1, std::memory_order_relaxed); }
  void add_unwound(uint64_t count) { unwound.fetch_add(count, std::memory_order_relaxed); }
  // Hits a filter turned away before the tracer saw them (in the jump engine's agent).
  void add_filtered_hits(uint64_t count) {
    hits.fetch_add(count, std::memory_order_relaxed);
    filtered.fetch_add(count, std::memory_order_relaxed);
  }
};

class ProbeStatistics {
 public:
  // Counters live as long as the statistics; references stay valid as probes are added.
  // Creating counters is for the control thread (when a probe is added); the hit path
  // keeps the reference and only bumps it.
  ProbeCounters& counters(uint32_t probe_id);
  const ProbeCounters* find(uint32_t probe_id) const;
  void add_dropped(uint64_t count) { dropped_.fetch_add(count, std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Events the live session's in-memory buffer (buffer_size_kb, behind the control surfaces'
  // trace and trace_pipe) overwrote before a reader took them, as the kernel's ring buffer
  // overwrites its oldest: dropped from that buffer, still written to -o or stdout.
  void add_overwritten(uint64_t count) { overwritten_.fetch_add(count, std::memory_order_relaxed); }
  uint64_t overwritten() const { return overwritten_.load(std::memory_order_relaxed); }
  // Records read from the jump engine's ring, when it had probes (--summary shows it: what
  // crossed from the program to the tracer).
  void set_ring_records(uint64_t count) { ring_records_ = count; }
  std::optional<uint64_t> ring_records() const { return ring_records_; }

 private:
  std::deque<ProbeCounters> counters_;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> overwritten_{0};
  std::optional<uint64_t> ring_records_;
};

// One line per probe in the catalog, uprobe_profile style.
std::string format_profile_line(const EventCatalog& catalog, const ProbeStatistics& statistics, uint32_t id);
std::string format_profile(const EventCatalog& catalog, const ProbeStatistics& statistics);
// A table with a header, one row per probe, totals, and the dropped-event count if any.
std::string format_summary(const EventCatalog& catalog, const ProbeStatistics& statistics);

}  // namespace xprobe::trace
