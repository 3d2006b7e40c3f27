#pragma once
// Aggregations computed inside the traced process by the jump engine's agent
// (agent::AgentAggregations, probe/agent_aggregation.h), and what the agent's tables gained
// merged back into the tracer's tables, which print them.
//
// The agent computes an aggregation when every key part and value is something it sees on the
// hit: an argument's value or the number it read (numbers are cut and sign-extended as the
// filter compares them, the .log2/.buckets and hist/lhist/latency buckets computed by the agent),
// a string argument of at most agent::kAggStringBytes - 1 bytes, the CPU, the return address,
// a constant (__probe_ip, the common fields that are 0), a return probe's latency (its entry's
// clock saved in the frame); the aggregation's own filter (a hist trigger's `if`) is compiled
// as the probe's filter is. Left to the tracer (the hits are records, as on breakpoints):
// common_pid and .execname, comm, string arrays, and any single hit whose key or value the agent could not read (a fault, a
// string longer than a key holds) or whose filter needs what only the tracer knows.
#include <cstdint>
#include <optional>

#include "probe/agent_aggregation.h"
#include "probe/fetch_program.h"
#include "trace/aggregation/hist_trigger.h"
#include "trace/aggregation/summaries.h"
#include "trace/event_record.h"

namespace xprobe::trace {

// The hist trigger for the agent, or none when the tracer must compute it.
std::optional<probe::AgentAggregationSpec> agent_aggregation_of(const HistSpec& spec, const EventDescription& event,
                                                                const probe::ProbeFetchPlan& plan, uint64_t probe_address);
// A summary for the agent. `entry_clock_slot`: the frame word with the entry's clock (latency).
std::optional<probe::AgentAggregationSpec> agent_aggregation_of(const SummarySpec& spec, const probe::ProbeFetchPlan& plan,
                                                                uint64_t probe_address,
                                                                std::optional<uint32_t> entry_clock_slot);

}  // namespace xprobe::trace
