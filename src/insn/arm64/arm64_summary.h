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
// What a probe may go on, and why not (the policy behind `never`, `exclusive` and `sve`), is
// arch/arm64/arm64_probe_policy.h's.
std::optional<InsnSummary> summarize(std::span<const uint8_t> bytes, uint64_t address);

}  // namespace xprobe::insn::arm64
