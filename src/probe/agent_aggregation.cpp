#include "probe/agent_aggregation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace xprobe::probe {

std::vector<uint8_t> agent_aggregations_block(std::span<const AgentAggregationSpec> specs, std::span<const uint64_t> tables) {
  agent::AgentAggregations head{};
  head.count = static_cast<uint32_t>(std::min<size_t>(specs.size(), agent::kMaxAggregations));
  std::vector<uint8_t> filters;
  for (uint32_t a = 0; a < head.count; ++a) {
    const AgentAggregationSpec& spec = specs[a];
    agent::AgentAggregation& item = head.items[a];
    item.table = a < tables.size() ? tables[a] : 0;
    item.key_count = static_cast<uint32_t>(std::min<size_t>(spec.keys.size(), agent::kMaxAggKeys));
    item.value_count = static_cast<uint32_t>(std::min<size_t>(spec.values.size(), agent::kMaxAggValues));
    std::copy_n(spec.keys.begin(), item.key_count, item.keys);
    std::copy_n(spec.values.begin(), item.value_count, item.values);
    if (!spec.filter.empty()) {
      while (filters.size() % 8 != 0) filters.push_back(0);
      item.filter_offset = static_cast<uint32_t>(sizeof head + filters.size());
      item.filter_bytes = static_cast<uint32_t>(spec.filter.size());
      filters.insert(filters.end(), spec.filter.begin(), spec.filter.end());
    }
  }
  // Sized once and copied into: GCC 12 at -O2 warns falsely (-Warray-bounds) about growing
  // a vector by insert() here.
  std::vector<uint8_t> bytes(sizeof head + filters.size());
  std::memcpy(bytes.data(), &head, sizeof head);
  if (!filters.empty()) std::memcpy(bytes.data() + sizeof head, filters.data(), filters.size());
  return bytes;
}

uint64_t agent_clock_mult(double ticks_per_ns) {
  if (!(ticks_per_ns > 0)) return 0;
  return static_cast<uint64_t>(std::llround(4294967296.0 / ticks_per_ns));
}

agent::AgentAggTableHeader agent_table_header(uint32_t max_entries, double ticks_per_ns) {
  agent::AgentAggTableHeader header{};
  header.magic = agent::kAggTableMagic;
  header.max_entries = max_entries;
  header.slot_count = 2 * uint64_t{max_entries};
  header.clock_mult = agent_clock_mult(ticks_per_ns);
  return header;
}

AgentTableReader::AgentTableReader(uint32_t max_entries, std::vector<uint8_t> folds)
    : max_entries_(max_entries), folds_(std::move(folds)) {
  folds_.resize(agent::kMaxAggValues, agent::kFoldSum);
}

uint64_t AgentTableReader::entries_to_read(const agent::AgentAggTableHeader& header) const {
  if (header.magic != agent::kAggTableMagic || header.max_entries != max_entries_ || header.slot_count != 2 * uint64_t{max_entries_})
    return 0;
  return std::min<uint64_t>(header.entries, max_entries_);
}

Result<AggregationUpdate> AgentTableReader::update(const agent::AgentAggTableHeader& header, std::span<const uint8_t> entries,
                                                   std::span<const uint8_t> again) {
  auto corrupt = [](const std::string& what) { return make_error(fmt::format("the aggregation table is corrupt: {}", what)); };
  if (header.magic != agent::kAggTableMagic) return corrupt("its header's magic was overwritten");
  if (header.max_entries != max_entries_ || header.slot_count != 2 * uint64_t{max_entries_})
    return corrupt(fmt::format("its size changed ({} entries, {} slots; it was made with {})", header.max_entries,
                               header.slot_count, max_entries_));
  if (header.dropped < dropped_) return corrupt("its dropped count went backwards");
  AggregationUpdate update;
  update.dropped = header.dropped - dropped_;
  dropped_ = header.dropped;
  const size_t count = std::min({entries.size(), again.size(), size_t{max_entries_} * sizeof(agent::AgentAggEntry)}) /
                       sizeof(agent::AgentAggEntry);
  if (seen_.size() < count) seen_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    agent::AgentAggEntry entry{}, second{};
    std::memcpy(&entry, entries.data() + i * sizeof entry, sizeof entry);
    std::memcpy(&second, again.data() + i * sizeof second, sizeof second);
    if (entry.ready > 1) return corrupt(fmt::format("entry {} has the state {:#x}", i, entry.ready));
    Seen& seen = seen_[i];
    if (entry.ready == 0) {
      if (seen.ready) return corrupt(fmt::format("entry {} was withdrawn", i));
      continue;
    }
    if (std::memcmp(&entry, &second, sizeof entry) != 0) continue;  // being updated: next time
    if (seen.ready && std::memcmp(seen.key, entry.key, sizeof entry.key) != 0)
      return corrupt(fmt::format("entry {} changed its key", i));
    if (entry.hitcount < seen.hitcount) return corrupt(fmt::format("entry {}'s hit count went backwards", i));
    if (entry.hitcount == seen.hitcount) continue;
    AggregatedEntry out;
    std::memcpy(out.key, entry.key, sizeof out.key);
    out.hitcount = entry.hitcount - seen.hitcount;
    for (uint32_t v = 0; v < agent::kMaxAggValues; ++v)
      out.values[v] = folds_[v] == agent::kFoldSum ? entry.values[v] - seen.values[v] : entry.values[v];
    update.entries.push_back(out);
    seen.ready = true;
    seen.hitcount = entry.hitcount;
    std::memcpy(seen.key, entry.key, sizeof seen.key);
    std::memcpy(seen.values, entry.values, sizeof seen.values);
  }
  return update;
}

}  // namespace xprobe::probe
