#pragma once
// An event filter compiled for the jump engine's agent (agent::AgentFilter, agent_abi.h), so
// that a hit the filter rejects writes no ring record. Each predicate becomes a term the agent
// can evaluate on what its ops captured (an argument's value, its memory read, the CPU, the
// return address), a constant where the tracer already knows the answer (__probe_ip, the
// common fields that are 0), or "unknown" where only the tracer can tell (comm, common_pid,
// $comm and immediate-string arguments): the agent drops a hit only when the filter is false
// whatever the unknown terms are, and the tracer still applies the whole filter to every
// record, so both engines pass exactly the same events.
#include <cstdint>
#include <vector>

#include "probe/agent/agent_abi.h"
#include "probe/fetch_program.h"
#include "probe/filter/event_filter.h"

namespace xprobe::probe::filter {

// Empty when no term could be decided in the agent (nothing would be saved) or the filter is
// too big for it (agent::kMaxFilterTerms): the tracer alone filters then.
// `probe_address`: the probed address (entry) or the function's (return).
// Where the agent finds an argument field's value: what the last instruction of its program
// stores (its value, a number it read, a string), or kFilterUnknown.
agent::AgentFilterSource argument_source(const FilterField& field, const ProbeFetchPlan& plan);

std::vector<uint8_t> compile_agent_filter(const EventFilter& filter, const ProbeFetchPlan& plan, uint64_t probe_address);

}  // namespace xprobe::probe::filter
