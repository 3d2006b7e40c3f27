#pragma once
// The trampoline an AArch64 jump-optimized probe branches to (at T, in a mapping of ours,
// which is never BTI-guarded). It saves the thread's registers as the first words of the
// arm64 ptrace register block (struct user_pt_regs: x0..x30, sp, pc, pstate; the layout the
// agent and the fetch programs index), calls the agent once per probe with (descriptor, saved
// block) under AAPCS64, restores every register and NZCV, runs the displaced instruction
// relocated and branches back:
//
//   sub sp, sp, #288              no red zone in AAPCS64: below sp is free to use
//   stp x0, x1, [sp] ... stp x28, x29, [sp, #224]; str x30, [sp, #240]
//   (strip: str x30, [sp, #272]; xpaclri; str x30, [sp, #240])   x30 as before PACIASP
//   add x0, sp, #288; str x0, [sp, #248]      sp as it was
//   ldr x0, =PC; str x0, [sp, #256]           pc = the probe's address
//   mrs x0, nzcv; str x0, [sp, #264]          pstate: NZCV only (the rest is not readable at EL0)
//   ldr x0, =DESCRIPTOR; mov x1, sp; bl AGENT  once per probe at this address
//   ldr x0, [sp, #264]; msr nzcv, x0
//   ldp x0, x1, [sp] ... ldr x30, [sp, #240 or #272]; add sp, sp, #288
//   relocated instruction, then b ADDRESS + 4
//   literals
// The sp is 16-aligned at a function's entry and a return site (AAPCS64), so the block and
// the agent's calls are aligned too. The V registers need no saving: the agent is built with
// -mgeneral-regs-only. The agent is reached by BL and the program by B: neither is checked
// by BTI. How each displaced instruction is relocated (relocate()):
//
//   displaced                  in the trampoline (C: its copy's address, A: the original's)
//   -------------------------  -----------------------------------------------------------
//   B label                    B label (re-encoded from C; refused if out of +-128 MiB)
//   BL label                   LDR x30, =A+4; B label (the original return address)
//   B.cond/BC.cond, CBZ/CBNZ,  the same test to C+8; B A+4; C+8: B label
//     TBZ/TBNZ label
//   BLR Xn (n != 30)           LDR x30, =A+4; BR Xn (from an unguarded page BR sets BTYPE
//                              01, which every landing pad accepts)
//   ADR/ADRP Xd, label         LDR Xd, =value
//   LDR/LDRSW Xt (literal),    the same load re-encoded from C when the literal is within
//     LDR St/Dt/Qt (literal)   +-1 MiB; else LDR Xt, =address; LDR/LDRSW Xt, [Xt] (Xt is
//                              its own scratch; S/D/Q refused: no general register free)
//   PRFM (literal)             nothing (a hint; re-encoded when in reach)
//   anything else the trap     the word itself (it runs the same anywhere), then B A+4
//     engine runs out of line
// Refused: what the trap engine refuses (execution_plan.h) but LDR (literal) into S/D/Q,
// BLR x30 (no register to hold the target while x30 gets the return address), and literal
// loads into XZR.
#include <cstdint>
#include <vector>

#include "arch/arm64/probe_support/jump_patch.h"
#include "arch/jump_arch.h"
#include "insn/arm64/arm64_insn.h"
#include "support/result.h"

namespace xprobe::arch::arm64 {

inline constexpr uint64_t kTrampolineSize = 512;  // with up to kMaxProbesPerTrampoline calls
inline constexpr size_t kMaxProbesPerTrampoline = 8;
inline constexpr uint32_t kTrampolineFrame = 288;  // the 34-word block, the signed x30, alignment

// Whether the trampoline can run `insn` (decoded at its address) relocated; the reach of its
// pc-relative operand is checked when the trampoline is built.
Status check_relocatable(const insn::arm64::Arm64Insn& insn);

// The words that do what `insn` did at insn.address when they run at `at`, ending in a branch
// (back to insn.address + 4, or the instruction's target), as bytes; `literal` gives where
// each 64-bit literal they load is (called with its value, returning its address).
struct Relocated {
  std::vector<uint32_t> words;
  // (index into words of an LDR Xt literal to fix, value)
  std::vector<std::pair<size_t, uint64_t>> literals;
};
Result<Relocated> relocate(const insn::arm64::Arm64Insn& insn, uint64_t at);

Result<Trampoline> build_trampoline(const Arm64JumpPatch& patch, const TrampolineTargets& targets);

// The word that replaces the displaced instruction: B from `from` to `to`.
Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to);

}  // namespace xprobe::arch::arm64
