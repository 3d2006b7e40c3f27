// The engine tests' choice of ProbeArch on an arm64 host (tests/probe/engine/zydis_stand_in.cpp is
// the x86 build's, with Zydis as an x86 decoding oracle): the project's own, AArch64.
#include "zydis_stand_in.h"

#include "arch/registry.h"

namespace xprobe::testing {

arch::x86::DecodeFunction engine_decoder() { return {}; }
probe::engine::ProbeArchChooser engine_arch() { return arch::probe_arch; }

}  // namespace xprobe::testing
