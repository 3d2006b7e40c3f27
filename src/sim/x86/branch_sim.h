#pragma once
// Emulation of the x86-64 instructions that must not run out of line because their effect
// depends on where they are: relative jmp/jcc/call, loop/jrcxz, ret, and indirect call and
// jmp (a call pushes its own address + length, which only the original location gives).
// Takes an instruction, its pc and a register set; knows nothing of probes or processes.
#include <cstdint>

#include "insn/x86/x86_insn.h"
#include "sim/x86/memory.h"
#include "sim/x86/regs.h"
#include "support/result.h"

namespace xprobe::sim::x86 {

// Whether emulate() handles this instruction. In 32-bit mode (insn.mode Protected32) words
// on the stack are 4 bytes and addresses wrap at 4 GiB; no 16-bit operand or address size.
bool can_emulate(const insn::x86::X86Insn& insn);

// The register state after executing `insn` located at `pc`. Stack writes (call) go through
// `memory`. Errors: an instruction it does not handle, an unreadable stack or operand.
Result<X86Regs> emulate(const insn::x86::X86Insn& insn, uint64_t pc, const X86Regs& regs, SimMemory& memory);

// Evaluates condition code `cc` (the low nibble of a Jcc/SETcc/CMOVcc opcode) on `rflags`.
bool condition_holds(uint8_t cc, uint64_t rflags);

// The effective address of a ModRM memory operand (rip-relative, SIB, segment bases).
Result<uint64_t> effective_address(const insn::x86::X86Insn& insn, uint64_t pc, const X86Regs& regs);

}  // namespace xprobe::sim::x86
