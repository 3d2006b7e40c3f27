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
  std::string out = fmt::format("{:<{}} {:>12} {:>12}  {}\n", "EVENT", width, "RECORDED", "MISSED", "PROBE POINT");
  uint64_t total_recorded = 0;
  uint64_t total_misses = 0;
  for (uint32_t id = 0; id < catalog.size(); ++id) {
    const uint64_t misses = misses_of(statistics, id);
    const uint64_t hits = std::max(hits_of(statistics, id), misses);  // read apart: a miss may be counted first
    total_recorded += hits - misses;
    total_misses += misses;
    const std::string& where = catalog[id].probe_point.empty() ? catalog[id].binary : catalog[id].probe_point;
    out += fmt::format("{:<{}} {:>12} {:>12}  {}\n", catalog[id].group + "/" + catalog[id].event, width, hits - misses,
                       misses, where);
  }
  out += fmt::format("{:<{}} {:>12} {:>12}\n", "total", width, total_recorded, total_misses);
  if (statistics.dropped() != 0) out += fmt::format("dropped events: {}\n", statistics.dropped());
  out += "RECORDED: hits whose event was written; MISSED: hits whose event was lost (arguments not fetched, "
         "ring or output full); every hit is in one of them\n";
  return out;
}

}  // namespace xprobe::trace
