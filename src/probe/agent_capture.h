#pragma once
// Fetch programs on the jump-optimized path. The in-process agent cannot run the tracer's
// interpreter, so each probe's programs are compiled into the agent's ops (agent_abi.h): they
// compute the same addresses and record every memory read the programs would make. The
// tracer then runs the unchanged fetch programs against the recorded registers and memory,
// so both engines print the same values by construction.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "probe/agent/agent_abi.h"
#include "probe/fetch_program.h"
#include "support/result.h"

namespace xprobe::probe {

struct AgentCapture {
  uint64_t register_mask = 0;
  uint32_t max_record = 0;  // bytes the agent reserves per hit
  std::vector<agent::AgentOp> ops;
  // Return probes: the record is made at the return; entry_ops save saved_count words at
  // the entry ($argN), which the record carries.
  bool is_return = false;
  uint32_t saved_count = 0;
  std::vector<agent::AgentOp> entry_ops;
};

// The agent's ops for a probe's plan (x86-64), or why the plan needs the tracer (registers
// the trampoline does not save, long string arrays, more saved arguments than a frame holds).
Result<AgentCapture> compile_agent_capture(const ProbeFetchPlan& plan, bool is_return = false);

// A return probe's entry saves the agent's clock too, in the frame word after its $argN, so
// the return knows the call's duration. Its index in AgentRecord::saved, or why not (a frame
// holds agent::kMaxSavedWords words).
Result<uint32_t> add_entry_clock(AgentCapture& capture);

// The AgentProbe descriptor (agent_abi.h) the trampoline hands the agent. `returns`: the
// AgentReturnState, for return probes; `max_active` their outstanding frames at most.
// `filter`: an agent::AgentFilter with its terms, steps and patterns (probe/filter), placed
// after the ops; `aggregations`: an agent::AgentAggregations block (probe/agent_aggregation.h),
// placed after the filter.
std::vector<uint8_t> agent_probe_descriptor(uint64_t ring, uint32_t probe_index, const AgentCapture& capture,
                                            uint64_t returns = 0, uint32_t max_active = 0,
                                            std::span<const uint8_t> filter = {},
                                            std::span<const uint8_t> aggregations = {});
// The descriptor of a return site (agent::kKindReturnSite).
std::vector<uint8_t> agent_return_site_descriptor(uint64_t ring, uint64_t returns);

// One record from the ring, validated against the capture it was made with.
struct AgentRecord {
  uint64_t tid = 0;
  uint64_t tsc = 0;
  uint32_t cpu = 0;
  uint64_t register_mask = 0;
  uint64_t registers[agent::kSavedRegisterWords] = {};
  bool is_return = false;
  uint64_t return_address = 0;   // return probes
  std::vector<uint64_t> saved;   // return probes: the words saved at entry
  struct Chunk {
    uint64_t address;
    std::span<const uint8_t> bytes;  // what arrived (a short chunk is a fault after it)
  };
  std::vector<Chunk> chunks;
};

// `record` is one whole record (header word first) as the traced process wrote it: untrusted.
// The result's chunks point into `record`.
Result<AgentRecord> parse_agent_record(std::span<const uint8_t> record, const AgentCapture& capture);

// The probe's argument values at that hit.
std::vector<FetchedValue> replay_agent_record(const ProbeFetchPlan& plan, const AgentRecord& record,
                                              std::string_view comm);

}  // namespace xprobe::probe
