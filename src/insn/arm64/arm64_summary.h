#pragma once
#include <optional>
#include <span>

#include "insn/summary.h"

namespace xprobe::insn::arm64 {

// The architecture-neutral summary of the A64 instruction in bytes[0..4) (little-endian) at
// `address`: length 4, kind = the class name, target for pc-relative branches and literals.
// nullopt for an unallocated encoding (including UDF) or fewer than 4 bytes.
//
// Kinds (class_name() of InsnClass):
//   b, bl, bcond (B.cond and BC.cond), cbz, cbnz, tbz, tbnz    pc-relative branches: simulated
//   adr, adrp, ldr_lit (W/X), ldr_lit_simd (S/D/Q), ldrsw_lit,
//   prfm_lit                                                    pc-relative data: simulated
//   br, blr, ret (plain and PAC forms)                           register branches: simulated
//   exclusive       load/store-exclusive (LDXR ... STLXP, byte/half/pair forms): refused, and
//                   so is every probe point inside a load-exclusive/store-exclusive sequence
//   never           BRK HLT SVC HVC SMC ERET* DRPS DCPSn, and system instructions writing
//                   privileged, interrupt-mask or debug state (see NeverReason)
//   hint            the HINT space: NOP, YIELD, WFE, WFI, SEV(L), BTI, PACIASP, AUTIASP, ...
//                   (safe out of line; BTI and PACI[AB]SP are flagged as landing pads)
//   sve             the SVE and SME encoding spaces: not validated here, so refused
//   none            everything else: safe to execute out of line
//
// Policy decisions (see never_reason_text() for the user-facing wording):
//   * SVC is never probed: out of line, the kernel would record the slot as the thread's
//     return address (syscall restart rewinds to pc - 4, signal frames, clone children).
//   * Reads of EL0 system registers (MRS NZCV, DAIF, FPCR, TPIDR_EL0, CNTVCT_EL0, ...) and of
//     the ID registers Linux emulates at EL0 (op1 = 0, CRn = 0: MIDR_EL1, ID_AA64*) are fine;
//     other EL1+ reads trap, and out of line the fault would name the slot, so they are
//     refused; writes are refused when they target EL1+ registers (op1 != 3), DAIF or
//     privileged PSTATE fields; MSR NZCV/FPCR/FPSR/TPIDR_EL0 are fine; anything touching the
//     debug registers (op0 = 2) is refused either way.
//   * CONSTRAINED UNPREDICTABLE forms that binutils also rejects (e.g. LDAR with should-be-one
//     fields clear, MOPS with overlapping registers, LDP into one register) are unallocated.
std::optional<InsnSummary> summarize(std::span<const uint8_t> bytes, uint64_t address);

}  // namespace xprobe::insn::arm64
