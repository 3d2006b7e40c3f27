#pragma once
// Simulates the A64 instructions that cannot run out of line: the pc-relative ones (ADR,
// ADRP, B, BL, B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ, LDR/LDRSW/PRFM literal) and the register
// branches (BR, BLR, RET and their pointer-authentication forms).
#include "insn/arm64/arm64_insn.h"
#include "sim/arm64/memory_reader.h"
#include "sim/arm64/registers.h"
#include "support/result.h"

namespace xprobe::sim::arm64 {

// What BRAA/BLRAA/RETAA... do with the pointer-authentication code in the branch target. A
// tracer holds no keys, so it cannot authenticate; it can only branch as the CPU would when
// authentication succeeds.
enum class PointerAuth : uint8_t {
  // As with the keys disabled (SCTLR_ELx.EnIx = 0): authentication is a no-op and the target
  // is the register value unchanged.
  KeysDisabled,
  // As when authentication succeeds: the PAC field above the virtual-address bits is replaced
  // by copies of bit 55 (what XPACI does). A forged pointer is not detected.
  StripAssumingSuccess,
};

struct SimulateOptions {
  PointerAuth pointer_auth = PointerAuth::KeysDisabled;
  unsigned virtual_address_bits = 48;  // with StripAssumingSuccess: where the PAC field starts
};

// Returns the registers after executing `insn` at `pc`: the new pc and any register it
// writes. The input is never modified. An error (never a crash) when the instruction is not a
// simulated class or a literal cannot be read.
Result<Registers> simulate(const insn::arm64::Arm64Insn& insn, uint64_t pc, const Registers& registers,
                           MemoryReader& memory, const SimulateOptions& options = {});

// ConditionHolds() of the Arm ARM for a condition code and PSTATE.NZCV (bits 31:28).
bool condition_holds(uint8_t cond, uint32_t nzcv);

}  // namespace xprobe::sim::arm64
