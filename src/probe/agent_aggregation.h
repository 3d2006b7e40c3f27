#pragma once
// The tracer's side of the aggregations the agent computes in the traced process
// (agent::AgentAggregations, agent_abi.h): the block a probe's descriptor carries, the table's
// first header, and the reader of a table. The table is the program's memory: the reader
// believes nothing it has not checked, and a table whose counts go backwards, whose header
// changed or whose entries are not what the agent writes is corrupt (an error naming what is
// wrong, after which the tracer aggregates that probe's hits itself).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "probe/agent/agent_abi.h"
#include "support/result.h"

namespace xprobe::probe {

// One aggregation compiled for the agent (trace/aggregation/agent_aggregation.h compiles them).
struct AgentAggregationSpec {
  std::vector<agent::AgentAggValue> keys;    // <= agent::kMaxAggKeys
  std::vector<agent::AgentAggValue> values;  // <= agent::kMaxAggValues
  std::vector<uint8_t> filter;               // the aggregation's own agent::AgentFilter; empty: none
  uint32_t max_entries = 2048;               // a power of two <= agent::kMaxAggEntries
};

// The AgentAggregations block with each aggregation's filter after it; `tables[i]` is the
// address of aggregation i's table in the process.
std::vector<uint8_t> agent_aggregations_block(std::span<const AgentAggregationSpec> specs, std::span<const uint64_t> tables);

// The agent's clock in nanoseconds: ticks * mult >> 32 (AgentAggTableHeader::clock_mult).
uint64_t agent_clock_mult(double ticks_per_ns);

// A new table's header, as the tracer writes it when it maps the table.
agent::AgentAggTableHeader agent_table_header(uint32_t max_entries, double ticks_per_ns);

// What a table holds that the tracer has not taken yet.
struct AggregatedEntry {
  uint64_t key[agent::kAggKeyWords] = {};
  uint64_t hitcount = 0;                     // hits since the last read
  uint64_t values[agent::kMaxAggValues] = {};  // sums: since the last read; min and max: as they are
};
struct AggregationUpdate {
  std::vector<AggregatedEntry> entries;
  uint64_t dropped = 0;  // new keys without room, since the last read
};

// Reads one table, read after read. Each read is the header, then the entries the header says
// are reserved (at most max_entries), read twice: an entry that differs between the two reads
// was being updated (or torn by the copy) and is left for the next read.
class AgentTableReader {
 public:
  AgentTableReader(uint32_t max_entries, std::vector<uint8_t> folds);
  uint32_t max_entries() const { return max_entries_; }
  // How many entries to read after `header` (0 when the header itself is wrong).
  uint64_t entries_to_read(const agent::AgentAggTableHeader& header) const;
  // `entries` and `again`: the two reads of entries_to_read(header) entries (either may be
  // short if a read failed).
  Result<AggregationUpdate> update(const agent::AgentAggTableHeader& header, std::span<const uint8_t> entries,
                                   std::span<const uint8_t> again);

 private:
  struct Seen {
    bool ready = false;
    uint64_t hitcount = 0;
    uint64_t key[agent::kAggKeyWords] = {};
    uint64_t values[agent::kMaxAggValues] = {};
  };
  uint32_t max_entries_;
  std::vector<uint8_t> folds_;
  std::vector<Seen> seen_;
  uint64_t dropped_ = 0;
};

}  // namespace xprobe::probe
