#pragma once
// What a probe's callback sees when a thread stopped on one of its breakpoints (the trap
// engine's probes, and the jump engine's return sites that a breakpoint watches).
#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "target/memory.h"
#include "target/process.h"
#include "target/registers.h"

namespace xprobe::probe::engine {

// Registers are the thread's at the breakpoint, its instruction pointer already set back to
// the probed address.
struct HitContext {
  target::Process& process;
  pid_t tid;
  uint64_t address;  // the probed address (function entry for return probes)
  const target::Registers& registers;
  target::Memory& memory;
};

struct ReturnContext {
  const HitContext& hit;               // registers at the return site: the return value is there
  uint64_t function;                   // where the entry was (the probe's address)
  uint64_t return_address;             // where it returned to
  const std::vector<uint64_t>& saved;  // what save_at_entry returned at the entry
};

// Return probes of either engine: how many instances may be outstanding (all threads) when
// the definition does not say (r[MAXACTIVE]).
inline constexpr uint32_t kDefaultMaxActive = 4096;

}  // namespace xprobe::probe::engine
