#pragma once
// The tracer's side of the aggregations the agent computes in the traced process
// (agent::AgentAggregations, agent_abi.h): the block a probe's descriptor carries, the table's
// first header, and the reader of a table. The table is the program's memory: the reader
// believes nothing it has not checked, and a table whose counts go backwards, whose header
// changed or whose entries are not what the agent writes is corrupt (an error naming what is
// wrong, after which the tracer aggregates that probe's hits itself).
#include <cstdint>
#include <functional>
#include <optional>
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
// address of aggregation i's pair of tables (AgentAggTablePair) in the process.
std::vector<uint8_t> agent_aggregations_block(std::span<const AgentAggregationSpec> specs, std::span<const uint64_t> tables);

// The agent's clock in nanoseconds: ticks * mult >> 32 (AgentAggTableHeader::clock_mult).
uint64_t agent_clock_mult(double ticks_per_ns);

// A new table's header, as the tracer writes it when it maps the table.
agent::AgentAggTableHeader agent_table_header(uint32_t max_entries, double ticks_per_ns);
// A new pair's header (table 0 active, no writers).
agent::AgentAggTablePair agent_pair_header(uint32_t max_entries);

// What a table held when the tracer took it.
struct AggregatedEntry {
  uint64_t key[agent::kAggKeyWords] = {};
  uint64_t hitcount = 0;                       // hits since the last read
  uint64_t values[agent::kMaxAggValues] = {};  // sums, minimum and maximum of those hits
};
struct AggregationUpdate {
  std::vector<AggregatedEntry> entries;
  uint64_t dropped = 0;  // new keys without room, since the last read
};

// How the tracer reaches the pair's memory: the traced process's (the jump engine), or the
// test's own.
struct AggregationMemory {
  std::function<bool(uint64_t address, std::span<uint8_t> into)> read;
  std::function<bool(uint64_t address, std::span<const uint8_t> bytes)> write;
};

// The tracer's side of one AgentAggTablePair, read after read.
class AgentTablePairReader {
 public:
  AgentTablePairReader(uint64_t address, uint32_t max_entries, std::vector<uint8_t> folds);
  uint64_t address() const { return address_; }
  uint32_t max_entries() const { return max_entries_; }
  // Makes the other table active, waits (briefly) until no agent folds into the one it left,
  // reads that one whole and empties it for its next turn. None: an agent is still in it (a
  // thread preempted or stopped inside the agent); the next collect() takes it, and switches
  // nothing meanwhile. `final`: no agent will come out (the process is ending or every thread
  // is stopped): the table is read as it is.
  Result<std::optional<AggregationUpdate>> collect(const AggregationMemory& memory, bool final);
  // One table's header and its first entries_to_read(header) entries, as read: the entries
  // it holds (checked: a table that is not what the agent writes is corrupt).
  Result<AggregationUpdate> entries_of(const agent::AgentAggTableHeader& header, std::span<const uint8_t> entries) const;
  uint64_t entries_to_read(const agent::AgentAggTableHeader& header) const;

 private:
  uint64_t address_;
  uint32_t max_entries_;
  std::vector<uint8_t> folds_;
  uint64_t active_ = 0;    // the table the agent folds into
  bool switched_ = false;  // the other one was left and is not read yet
};

}  // namespace xprobe::probe
