#pragma once
// Test-only: fills xprobe's X86Insn from Zydis (a test oracle), for the fields the trap
// engine uses, while src/insn/x86 is still a placeholder. engine_decoder() picks the
// project's decoder as soon as it decodes a plain nop.
#include <cstdint>
#include <span>

#include "probe/engine/trap_engine.h"

namespace xprobe::testing {

insn::x86::DecodeStatus zydis_decode(std::span<const uint8_t> bytes, uint64_t address, insn::x86::X86Insn& out);
bool project_decoder_works();
probe::engine::EngineOptions engine_options();

}  // namespace xprobe::testing
