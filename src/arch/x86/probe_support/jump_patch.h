#pragma once
// Whether a probe may become a 5-byte `jmp rel32` to a trampoline (the jump-optimized engine)
// instead of an int3, and which instructions the jump displaces.
//
// The jump overwrites every instruction that starts in [address, address + 5). That is safe
// only when nothing can arrive inside those bytes once they are overwritten:
//   - the place is a function's first instruction, or a return site: the instruction right
//     after a call, in the caller (return probes). Other mid-function bytes can be reached in
//     ways no decoding of the function shows (computed gotos, code in other functions); a
//     return site is reached by returns, which land on its first byte, and by the branches
//     and landing pads checked below;
//   - no C++ landing pad of the function lies inside the displaced bytes (the caller reads
//     them from the exception tables);
//   - no relative branch in the function, nor in its split-off parts (foo.cold), targets
//     (address, end of the displaced instructions): all of them are decoded to their end. At
//     a return site (often followed by a loop's head) a jmp/jcc rel32 outside the displaced
//     bytes that lands on a displaced instruction is redirected instead, to that
//     instruction's copy in the trampoline (its rel32 rewritten);
//   - the function has no indirect jump (a jump table could target anything);
//   - no other symbol starts inside the displaced bytes (hand-written code with several
//     entry points: the caller passes them);
//   - every jmp/jcc leaving the function lands on another function (a tail call) or in a
//     fragment of it that the caller can describe (a cold part in a stripped binary: its
//     extent from the unwind tables), whose branches count too;
//   - every displaced instruction can run relocated in the trampoline (as in an out-of-line
//     slot, or as a relative jmp/jcc re-encoded with rel32), and a call is the last one (its
//     return address, pushed as the original one, is then the end of the displaced bytes).
// Threads stopped inside the displaced bytes are the engine's to check when it patches.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "arch/jump_arch.h"
#include "arch/x86/probe_support/rel32.h"
#include "insn/x86/x86_insn.h"
#include "support/result.h"

namespace xprobe::arch::x86 {

inline constexpr uint64_t kJumpPatchSize = kJmpRel32Size;  // the jmp rel32

struct DisplacedInstruction {
  insn::x86::X86Insn insn;            // decoded at its original address
  std::vector<uint8_t> bytes;
};

// A branch whose rel32 (its last 4 bytes) must lead to the trampoline's copy of
// displaced[displaced].
using arch::BranchRedirect;

struct JumpPatchPlan {
  uint64_t address = 0;
  uint64_t length = 0;  // bytes the displaced instructions cover (>= kJumpPatchSize)
  std::vector<DisplacedInstruction> displaced;
  std::vector<BranchRedirect> redirects;
};

// The function as its file describes it (arch/jump_arch.h).
using arch::CodeRange;
using arch::ForeignCode;
using arch::ForeignTarget;
using arch::JumpPatchFunction;
using arch::JumpPatchPlace;

// The plan, or why the place must stay a breakpoint.
Result<JumpPatchPlan> plan_jump_patch(const JumpPatchFunction& function, uint64_t address,
                                      JumpPatchPlace place = JumpPatchPlace::FunctionEntry);

}  // namespace xprobe::arch::x86
