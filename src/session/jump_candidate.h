#pragma once
// Whether a resolved probe can go on the jump-optimized engine, and its spec if so: an entry or
// return probe at a function's first instruction whose arguments the agent can record, in a
// function whose bytes prove the jump safe (arch/jump_arch.h).
#include <string>

#include "elf/exception_tables.h"
#include "probe/definition.h"
#include "probe/engine/jump_engine.h"
#include "probe/fetch_program.h"
#include "probe/resolve/module_map.h"
#include "probe/resolve/place_resolver.h"
#include "support/result.h"

namespace xprobe::session {

// The spec without its callbacks, or why the probe needs a breakpoint.
Result<probe::engine::JumpProbeSpec> jump_candidate(const probe::ProbeDefinition& definition,
                                                    const probe::ResolvedPoint& point,
                                                    const probe::ProbeFetchPlan& plan, const probe::ModuleMap& modules);

// The caller's function holding the return site `address`, with the C++ landing pads near it,
// for the jump engine to plan its patch; or why it cannot be patched.
Result<arch::JumpPatchFunction> return_site_function(uint64_t address, const probe::ModuleMap& modules);

}  // namespace xprobe::session
