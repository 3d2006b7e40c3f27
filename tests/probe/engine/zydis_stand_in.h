#pragma once
// Test-only: fills xprobe's X86Insn from Zydis (a test oracle), for the fields the trap
// engine uses, while src/insn/x86 is still a placeholder. engine_decoder() picks the
// project's decoder as soon as it decodes a plain nop.
#include <cstdint>
#include <span>

#include "arch/x86/probe_support/x86_probe_arch.h"
#include "probe/engine/trap_engine.h"

namespace xprobe::testing {

insn::x86::DecodeStatus zydis_decode(std::span<const uint8_t> bytes, uint64_t address, insn::x86::X86Insn& out);
bool project_decoder_works();
// The decoder the engine tests use, and the ProbeArch built on it for x86-64 code (i386 code
// gets the project's own).
arch::x86::DecodeFunction engine_decoder();
probe::engine::ProbeArchChooser engine_arch();

}  // namespace xprobe::testing
