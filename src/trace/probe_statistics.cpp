#include "trace/probe_statistics.h"

#include <fmt/format.h>

#include <algorithm>

namespace xprobe::trace {

ProbeCounters& ProbeStatistics::counters(uint32_t probe_id) {
  while (counters_.size() <= probe_id) counters_.emplace_back();
  return counters_[probe_id];
}

const ProbeCounters* ProbeStatistics::find(uint32_t probe_id) const {
  return probe_id < counters_.size() ? &counters_[probe_id] : nullptr;
}

namespace {

uint64_t hits_of(const ProbeStatistics& statistics, uint32_t id) {
  const ProbeCounters* counters = statistics.find(id);
  return counters ? counters->hits.load(std::memory_order_relaxed) : 0;
}

uint64_t misses_of(const ProbeStatistics& statistics, uint32_t id) {
  const ProbeCounters* counters = statistics.find(id);
  return counters ? counters->misses.load(std::memory_order_relaxed) : 0;
}

}  // namespace

std::string format_profile(const EventCatalog& catalog, const ProbeStatistics& statistics) {
  std::string out;
  for (uint32_t id = 0; id < catalog.size(); ++id) {
    out += fmt::format("  {} {:<44} {:>15} {:>15}\n", catalog[id].binary, catalog[id].event, hits_of(statistics, id),
                       misses_of(statistics, id));
  }
  return out;
}

std::string format_summary(const EventCatalog& catalog, const ProbeStatistics& statistics) {
  size_t width = 5;  // "EVENT"
  for (const EventDescription& description : catalog) {
    width = std::max(width, description.group.size() + 1 + description.event.size());
  }
  std::string out = fmt::format("{:<{}} {:>12} {:>12}  {}\n", "EVENT", width, "HITS", "MISSES", "BINARY");
  uint64_t total_hits = 0;
  uint64_t total_misses = 0;
  for (uint32_t id = 0; id < catalog.size(); ++id) {
    const uint64_t hits = hits_of(statistics, id);
    const uint64_t misses = misses_of(statistics, id);
    total_hits += hits;
    total_misses += misses;
    out += fmt::format("{:<{}} {:>12} {:>12}  {}\n", catalog[id].group + "/" + catalog[id].event, width, hits, misses,
                       catalog[id].binary);
  }
  out += fmt::format("{:<{}} {:>12} {:>12}\n", "total", width, total_hits, total_misses);
  if (statistics.dropped() != 0) out += fmt::format("dropped events: {}\n", statistics.dropped());
  return out;
}

}  // namespace xprobe::trace
