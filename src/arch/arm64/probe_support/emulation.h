#pragma once
// The trap engine's simulation of a probed A64 instruction (execution_plan.h's Simulate path)
// on a thread's ptrace register block: pure, so it is tested on any host.
#include "arch/arm64/probe_support/registers.h"
#include "insn/arm64/arm64_insn.h"
#include "sim/arm64/memory_reader.h"
#include "support/result.h"

namespace xprobe::arch::arm64 {

// `regs` after `insn` ran at insn.address: the simulator's result (new pc, written
// registers) with PSTATE as from_sim() leaves it. An error, `regs` untouched, when the
// instruction is not simulated or its literal cannot be read (the original would fault).
Result<UserPtRegs> emulate(const insn::arm64::Arm64Insn& insn, const UserPtRegs& regs, sim::arm64::MemoryReader& memory);

}  // namespace xprobe::arch::arm64
