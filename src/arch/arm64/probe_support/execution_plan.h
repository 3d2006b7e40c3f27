#pragma once
// How the trap engine gets past a probed A64 instruction after the BRK stop: run a copy of it
// out of line in a slot, simulate it (src/sim/arm64), or not probe it at all.
//
//   instruction class                                 path          why
//   -----------------------------------------------   -----------   ---------------------------------------------
//   no pc-relative operand, no link (data            out of line   runs the same anywhere: a copy of the word,
//     processing, loads/stores, atomics, hints                     then B back to the next instruction (the slot
//     incl. BTI/PACIASP/AUTIASP, MRS/MSR of EL0                    area within +-128 MiB of the code)
//     state, LSE, LDAPR...)
//   B, BL, B.cond, BC.cond, CBZ/CBNZ, TBZ/TBNZ        simulate      the target is relative to pc (from a slot it
//                                                                   would be wrong); BL links the ORIGINAL pc + 4
//   ADR, ADRP                                         simulate      their result is relative to pc
//   LDR (literal) W/X, LDRSW (literal)                simulate      the literal is relative to pc: read from the
//                                                                   traced process's memory
//   PRFM (literal)                                    simulate      a hint with no architectural effect: nothing
//   BR, BLR, RET                                      simulate      BLR must link the original pc + 4; BR and RET
//                                                                   are simulated like the kernel's uprobes do
//                                                                   (one stop, no slot)
//   BRAA/BRAB/BRAAZ/BRABZ, RETAA/RETAB                out of line   the hardware authenticates (a tracer holds no
//                                                                   keys): target and modifier are registers, so
//                                                                   the copy branches exactly as the original
//   BLRAA/BLRAB/BLRAAZ/BLRABZ                         refused       out of line x30 would name the slot, and a
//                                                                   simulation cannot authenticate the target
//   LDR (literal) S/D/Q                               refused       its literal is relative to pc, and the V
//                                                                   registers are not in the ptrace block the
//                                                                   simulation gets
//   load/store-exclusive, FEAT_MOPS CPY*/SET*,        refused       arm64_probe_policy.h: an exception clears the
//     BRK HLT SVC HVC SMC ERET* DRPS DCPS*,                         monitor; MOPS parts must run consecutively;
//     privileged/debug system register access,                     the rest trap by themselves or touch state
//     SVE/SME, unallocated                                         a user-space probe must not (see never_reason)
//
// Where the kernel's arm64 uprobes (arch/arm64/kernel/probes/decode-insn.c) differ: they
// refuse every MSR, every hint but NOP/BTI/PAC signing, PRFM (literal) and the PAC branch
// forms; xprobe runs the EL0-safe MSRs (NZCV, FPCR, FPSR, TPIDR_EL0) and all hints (AUTIASP
// included) out of line since none of them depends on where it runs, simulates PRFM as the
// no-op it is, and lets the CPU authenticate BRAA/RETAA in a slot. The kernel steps FEAT_MOPS
// out of line; xprobe refuses it (the sequence rule above).
#include <cstdint>
#include <string>
#include <vector>

#include "insn/arm64/arm64_insn.h"
#include "support/result.h"

namespace xprobe::arch::arm64 {

enum class ExecutionPath { OutOfLine, Simulate, Refused };

struct ExecutionPlan {
  ExecutionPath path = ExecutionPath::Refused;
  std::string reason;  // why it is refused
};

// `insn` decoded at its address (probe_refusal() included: every refusal comes from here).
ExecutionPlan plan_execution(const insn::arm64::Arm64Insn& insn);

// A slot: the instruction, then `B` back to the one after it.
inline constexpr uint64_t kSlotSize = 8;
// Distance the slot area may have from any code it serves: a B's +-128 MiB with a margin for
// the area's own size.
inline constexpr uint64_t kSlotReach = (uint64_t{1} << 27) - (uint64_t{1} << 20);

// The bytes of the slot at `slot` for `insn` (planned OutOfLine): its word, then B to
// insn.address + 4. An error when the slot is misaligned or out of B's reach.
Result<std::vector<uint8_t>> build_slot(const insn::arm64::Arm64Insn& insn, uint64_t slot);

// B from `from` to `to`; nullopt when they are misaligned or more than +-128 MiB apart.
std::optional<uint32_t> encode_b(uint64_t from, uint64_t to);

}  // namespace xprobe::arch::arm64
