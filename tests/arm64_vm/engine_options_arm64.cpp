// The engine tests' options on an arm64 host (tests/engine/zydis_stand_in.cpp is the x86
// build's, with Zydis as an x86 decoding oracle): the trap engine's own AArch64 ProbeArch.
#include "zydis_stand_in.h"

namespace xprobe::testing {

probe::engine::EngineOptions engine_options() { return {}; }

}  // namespace xprobe::testing
