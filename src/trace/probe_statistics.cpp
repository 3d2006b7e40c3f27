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
  auto unwound_of = [&](uint32_t id) {
    const ProbeCounters* counters = statistics.find(id);
    return counters ? counters->unwound.load(std::memory_order_relaxed) : 0;
  };
  bool any_filtered = false, any_unwound = false;
  for (uint32_t id = 0; id < catalog.size(); ++id) {
    any_filtered = any_filtered || filtered_of(id) != 0;
    any_unwound = any_unwound || unwound_of(id) != 0;
  }
  // The FILTERED and UNWOUND columns only where there is one, so other tables stay as they were.
  auto row = [&](const std::string& name, uint64_t recorded, uint64_t misses, uint64_t filtered, uint64_t unwound,
                 const std::string& where) {
    std::string line = fmt::format("{:<{}} {:>12} {:>12}", name, width, recorded, misses);
    if (any_filtered) line += fmt::format(" {:>12}", filtered);
    if (any_unwound) line += fmt::format(" {:>12}", unwound);
    return line + (where.empty() ? "" : "  " + where) + "\n";
  };
  std::string out = fmt::format("{:<{}} {:>12} {:>12}", "EVENT", width, "RECORDED", "MISSED");
  if (any_filtered) out += fmt::format(" {:>12}", "FILTERED");
  if (any_unwound) out += fmt::format(" {:>12}", "UNWOUND");
  out += "  PROBE POINT\n";
  uint64_t total_recorded = 0;
  uint64_t total_misses = 0;
  uint64_t total_filtered = 0;
  uint64_t total_unwound = 0;
  for (uint32_t id = 0; id < catalog.size(); ++id) {
    const uint64_t misses = misses_of(statistics, id);
    const uint64_t filtered = filtered_of(id);
    const uint64_t hits = std::max(hits_of(statistics, id), misses + filtered);  // read apart: a miss may be counted first
    total_recorded += hits - misses - filtered;
    total_misses += misses;
    total_filtered += filtered;
    total_unwound += unwound_of(id);
    const std::string& where = catalog[id].probe_point.empty() ? catalog[id].binary : catalog[id].probe_point;
    out += row(catalog[id].group + "/" + catalog[id].event, hits - misses - filtered, misses, filtered, unwound_of(id), where);
  }
  out += row("total", total_recorded, total_misses, total_filtered, total_unwound, "");
  if (statistics.dropped() != 0) out += fmt::format("dropped events: {}\n", statistics.dropped());
  if (statistics.overwritten() != 0)
    out += fmt::format("overwritten in the live buffer (buffer_size_kb): {}\n", statistics.overwritten());
  if (statistics.ring_records()) out += fmt::format("ring records read: {}\n", *statistics.ring_records());
  out += "RECORDED: hits whose event was written; MISSED: hits whose event was lost (arguments not fetched, "
         "ring or output full)";
  out += any_filtered ? "; FILTERED: hits the event's filter turned away" : "";
  out += "; every hit is in one of them\n";
  if (any_unwound)
    out += "UNWOUND: calls of a return probe given up without a return seen (a longjmp or exception unwound them, "
           "or the thread switched to another stack, where they may have returned unseen)\n";
  return out;
}

}  // namespace xprobe::trace
