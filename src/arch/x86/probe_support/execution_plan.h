#pragma once
// How the trap engine gets past a probed instruction after the breakpoint stop: run a copy of
// it out of line in a slot, emulate it, or not probe it at all.
//
//   instruction class                                  path          why
//   ------------------------------------------------   -----------   --------------------------------------------
//   no control flow, no RIP-relative operand            out of line   runs the same anywhere
//   RIP-relative memory operand (mov/lea/cmp/add...,    out of line   disp32 rewritten to address the same byte
//     push/pop [rip+x], jmp [rip+x] as in PLT stubs)                  from the slot (slot area within +-2 GiB)
//   jmp rel8/rel32, jcc rel8/rel32                      emulate       a relative target from the slot is wrong and
//                                                                    rel8 cannot be re-encoded to reach
//   loop/loope/loopne/jrcxz/jecxz                       emulate       rel8 only
//   call rel32                                          emulate       must push the ORIGINAL next address (a slot
//   call r/m64 (FF /2)                                  emulate       address on the stack breaks unwinding and
//                                                                    backtraces and returns into the slot area)
//   jmp r/m64 (FF /4) via register or memory            out of line   nothing depends on where it runs (rip-
//                                                                    relative memory forms get the fix-up)
//   ret, ret imm16                                      out of line   pops its target, location-independent
//   syscall                                             out of line   rcx receives a slot address: syscall
//                                                                    clobbers rcx by ABI anyway
//   int3/int n/into/int1, ud0/1/2, iret, far transfers,  refused       they trap, fault or switch code segment:
//   privileged, xbegin (relative abort target),                      a copy would report the slot's address
//   anything else with a relative target
//
// 32-bit code (i386 processes) takes the same paths; it has no RIP-relative operands, its
// slot's jmp rel32 reaches all of the 4 GiB address space, and sysenter is refused (it
// returns through the vDSO, not after itself). build_slot is for 64-bit code only.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "insn/x86/x86_insn.h"
#include "support/result.h"

namespace xprobe::arch::x86 {

enum class ExecutionPath { OutOfLine, Emulate, Refused };

struct ExecutionPlan {
  ExecutionPath path = ExecutionPath::Refused;
  std::string reason;  // why it is refused
};

ExecutionPlan plan_execution(const insn::x86::X86Insn& insn);

// Slots are fixed-size: the longest instruction (15) + jmp rel32 (5), rounded up.
inline constexpr uint64_t kSlotSize = 32;
// Distance the slot area may have from any code it serves: rel32 reach with margin for the
// area's own size and the displacement of the instruction itself.
inline constexpr uint64_t kSlotReach = (uint64_t{1} << 31) - (uint64_t{64} << 20);

// The bytes of the out-of-line slot at `slot` for the instruction `bytes` (decoded as
// `insn`) that lives at `original`: the instruction with its RIP-relative displacement
// rewritten, then `jmp rel32` to original + length. Error if a displacement does not fit.
Result<std::vector<uint8_t>> build_slot(std::span<const uint8_t> bytes, const insn::x86::X86Insn& insn,
                                        uint64_t original, uint64_t slot);

// Where a thread inside slot `slot` (built for `original`, `length` bytes) would be in the
// original code: the start maps to the original instruction, the jmp back to the one after.
// Returns 0 if `ip` is neither.
uint64_t original_address_for_slot_ip(uint64_t ip, uint64_t slot, uint64_t original, uint64_t length);

}  // namespace xprobe::arch::x86
