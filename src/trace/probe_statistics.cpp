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

std::string format_profile_line(const EventCatalog& catalog, const ProbeStatistics& statistics, uint32_t id) {
  return fmt::format("  {} {:<44} {:>15} {:>15}\n", catalog[id].binary, catalog[id].event, hits_of(statistics, id),
                     misses_of(statistics, id));
}

std::string format_profile(const EventCatalog& catalog, const ProbeStatistics& statistics) {
  std::string out;
  for (uint32_t id = 0; id < catalog.size(); ++id) out += format_profile_line(catalog, statistics, id);
  return out;
}

std::string format_summary(const EventCatalog& catalog, const ProbeStatistics& statistics) {
  size_t width = 5;  // "EVENT"
  for (const EventDescription& description : catalog) {
    width = std::max(width, description.group.size() + 1 + description.event.size());
  }
  auto filtered_of = [&](uint32_t id) {
    const ProbeCounters* counters = statistics.find(id);
    return counters ? counters->filtered.load(std::memory_order_relaxed) : 0;
  };
  bool any_filtered = false;
  for (uint32_t id = 0; id < catalog.size(); ++id) any_filtered = any_filtered || filtered_of(id) != 0;
  // The FILTERED column only where a filter turned hits away, so tables without filters stay as they were.
  auto row = [&](const std::string& name, uint64_t recorded, uint64_t misses, uint64_t filtered, const std::string& where) {
    std::string line = fmt::format("{:<{}} {:>12} {:>12}", name, width, recorded, misses);
    if (any_filtered) line += fmt::format(" {:>12}", filtered);
    return line + (where.empty() ? "" : "  " + where) + "\n";
  };
  std::string out = fmt::format("{:<{}} {:>12} {:>12}", "EVENT", width, "RECORDED", "MISSED");
  if (any_filtered) out += fmt::format(" {:>12}", "FILTERED");
  out += "  PROBE POINT\n";
  uint64_t total_recorded = 0;
  uint64_t total_misses = 0;
  uint64_t total_filtered = 0;
  for (uint32_t id = 0; id < catalog.size(); ++id) {
    const uint64_t misses = misses_of(statistics, id);
    const uint64_t filtered = filtered_of(id);
    const uint64_t hits = std::max(hits_of(statistics, id), misses + filtered);  // read apart: a miss may be counted first
    total_recorded += hits - misses - filtered;
    total_misses += misses;
    total_filtered += filtered;
    const std::string& where = catalog[id].probe_point.empty() ? catalog[id].binary : catalog[id].probe_point;
    out += row(catalog[id].group + "/" + catalog[id].event, hits - misses - filtered, misses, filtered, where);
  }
  out += row("total", total_recorded, total_misses, total_filtered, "");
  if (statistics.dropped() != 0) out += fmt::format("dropped events: {}\n", statistics.dropped());
  if (statistics.ring_records()) out += fmt::format("ring records read: {}\n", *statistics.ring_records());
  out += "RECORDED: hits whose event was written; MISSED: hits whose event was lost (arguments not fetched, "
         "ring or output full)";
  out += any_filtered ? "; FILTERED: hits the event's filter turned away" : "";
  out += "; every hit is in one of them\n";
  return out;
}

}  // namespace xprobe::trace
