#include "probe/agent_aggregation.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <map>
#include <sched.h>
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

agent::AgentAggTablePair agent_pair_header(uint32_t max_entries) {
  agent::AgentAggTablePair pair{};
  pair.magic = agent::kAggPairMagic;
  pair.table_bytes = agent::agg_pair_table_bytes(max_entries);
  return pair;
}

AgentTablePairReader::AgentTablePairReader(uint64_t address, uint32_t max_entries, std::vector<uint8_t> folds)
    : address_(address), max_entries_(max_entries), folds_(std::move(folds)) {
  folds_.resize(agent::kMaxAggValues, agent::kFoldSum);
}

uint64_t AgentTablePairReader::entries_to_read(const agent::AgentAggTableHeader& header) const {
  if (header.magic != agent::kAggTableMagic || header.max_entries != max_entries_ || header.slot_count != 2 * uint64_t{max_entries_})
    return 0;
  return std::min<uint64_t>(header.entries, max_entries_);
}

namespace {
Error corrupt(const std::string& what) { return make_error(fmt::format("the aggregation table is corrupt: {}", what)); }
}  // namespace

Result<AggregationUpdate> AgentTablePairReader::entries_of(const agent::AgentAggTableHeader& header,
                                                           std::span<const uint8_t> entries) const {
  if (header.magic != agent::kAggTableMagic) return corrupt("its header's magic was overwritten");
  if (header.max_entries != max_entries_ || header.slot_count != 2 * uint64_t{max_entries_})
    return corrupt(fmt::format("its size changed ({} entries, {} slots; it was made with {})", header.max_entries,
                               header.slot_count, max_entries_));
  AggregationUpdate update;
  update.dropped = header.dropped;
  const size_t count = std::min<size_t>(entries.size(), size_t{max_entries_} * sizeof(agent::AgentAggEntry)) /
                       sizeof(agent::AgentAggEntry);
  std::map<std::vector<uint64_t>, size_t> keys;  // a key's entry: the agent gives each key one
  for (size_t i = 0; i < count; ++i) {
    agent::AgentAggEntry entry{};
    std::memcpy(&entry, entries.data() + i * sizeof entry, sizeof entry);
    if (entry.ready > 1) return corrupt(fmt::format("entry {} has the state {:#x}", i, entry.ready));
    if (entry.ready == 0 || entry.hitcount == 0) continue;  // a key that lost its race, or not counted yet
    const auto [other, fresh] = keys.try_emplace(std::vector<uint64_t>(entry.key, entry.key + agent::kAggKeyWords), i);
    if (!fresh) return corrupt(fmt::format("entries {} and {} have the same key", other->second, i));
    AggregatedEntry out;
    std::memcpy(out.key, entry.key, sizeof out.key);
    out.hitcount = entry.hitcount;
    std::memcpy(out.values, entry.values, sizeof out.values);
    update.entries.push_back(out);
  }
  return update;
}

Result<std::optional<AggregationUpdate>> AgentTablePairReader::collect(const AggregationMemory& memory, bool final) {
  auto bytes_of = [](auto& value) { return std::span(reinterpret_cast<uint8_t*>(&value), sizeof value); };
  if (!switched_) {
    uint64_t other = active_ ^ 1;
    if (!memory.write(address_ + offsetof(agent::AgentAggTablePair, active), bytes_of(other)))
      return make_error("cannot switch the aggregation tables");
    // The store before the loads of writers[] (AgentAggTablePair).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    switched_ = true;
  }
  const uint64_t left = active_;
  agent::AgentAggTablePair pair{};
  bool quiet = false;
  for (int look = 0; look < 64 && !quiet; ++look) {
    if (look != 0) sched_yield();
    if (!memory.read(address_, bytes_of(pair))) return make_error("cannot read the aggregation tables");
    if (pair.magic != agent::kAggPairMagic || pair.table_bytes != agent::agg_pair_table_bytes(max_entries_))
      return corrupt("the header of its pair of tables was overwritten");
    quiet = pair.writers[left][0] == 0;
  }
  if (!quiet && !final) return std::optional<AggregationUpdate>{};
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint64_t table = address_ + agent::agg_pair_table_offset(max_entries_, left);
  agent::AgentAggTableHeader header{};
  if (!memory.read(table, bytes_of(header))) return make_error("cannot read an aggregation table");
  const uint64_t count = entries_to_read(header);
  std::vector<uint8_t> entries(count * sizeof(agent::AgentAggEntry));
  const uint64_t entries_at = table + agent::agg_entries_offset(max_entries_);
  if (count != 0 && !memory.read(entries_at, entries)) return make_error("cannot read an aggregation table");
  auto update = entries_of(header, entries);
  if (!update) return update.error();
  // Emptied for its next turn: its slots, the entries' states, then the counts.
  if (header.entries != 0 || header.dropped != 0) {
    const std::vector<uint8_t> zeros(std::max<uint64_t>(2 * uint64_t{max_entries_} * 8, entries.size()), 0);
    const uint64_t counts[2] = {0, 0};  // entries, dropped
    if (!memory.write(table + sizeof header, std::span(zeros.data(), 2 * uint64_t{max_entries_} * 8)) ||
        !memory.write(entries_at, std::span(zeros.data(), entries.size())) ||
        !memory.write(table + offsetof(agent::AgentAggTableHeader, entries),
                      std::span(reinterpret_cast<const uint8_t*>(counts), sizeof counts)))
      return make_error("cannot empty an aggregation table");
  }
  switched_ = false;
  active_ ^= 1;
  return std::optional<AggregationUpdate>(std::move(*update));
}

}  // namespace xprobe::probe
