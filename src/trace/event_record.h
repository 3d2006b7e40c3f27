#pragma once
// One probe hit as an engine records it, and what the formatters need to know about the
// probe that produced it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/definition.h"
#include "probe/fetched_value.h"

namespace xprobe::trace {

struct EventRecord {
  uint32_t probe_id = 0;        // index into the EventCatalog
  int32_t tid = 0;
  std::string comm;             // the thread's name (at most 15 characters on Linux)
  uint32_t cpu = 0;
  uint64_t timestamp_ns = 0;    // CLOCK_MONOTONIC (the kernel's trace clock counts from boot too)
  uint64_t address = 0;         // entry: the probed address; return: where the function returned to
  std::optional<uint64_t> function_address;  // return probes: the function's entry address
  std::vector<probe::FetchedValue> values;   // one per argument, in definition order
  // Only for a hist keyed on common_stacktrace: the thread's user stack at the hit, innermost
  // first (probe/user_stack.h).
  std::vector<uint64_t> user_stack;
};

// The static side of an event: names for the header of each line and each argument.
struct EventDescription {
  std::string group = "uprobes";
  std::string event;
  std::string binary;           // shown in the profile ("" = the main executable's path)
  // The probe point as the summary names it: "BINARY:FUNCTION[+0xOFF]" (an event with several
  // probe points, a named glob for one, has one row per point).
  std::string probe_point;
  bool is_return = false;
  std::vector<std::string> argument_names;
  std::vector<probe::FetchType> argument_types;
};

EventDescription describe_event(const probe::ProbeDefinition& definition, std::string binary_path = {});

using EventCatalog = std::vector<EventDescription>;

}  // namespace xprobe::trace
