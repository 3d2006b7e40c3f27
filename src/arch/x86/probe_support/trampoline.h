#pragma once
// The trampoline a jump-optimized probe jumps to. It saves the thread's registers as the
// first words of the x86-64 ptrace register block (r15 .. rsp, the layout the agent and the
// fetch programs index), calls the agent with (descriptor, saved block), restores every
// register and the flags, runs the displaced instructions relocated, and jumps back:
//
//   lea rsp, [rsp - 128 - 160]    skip the red zone, room for the block
//   mov [rsp + 8*i], reg          the 15 general registers (not rsp)
//   pushfq; pop rax; mov [rsp + 144], rax
//   lea rax, [rsp + 288]; mov [rsp + 152], rax         rsp as it was
//   mov rax, ADDRESS; mov [rsp + 128], rax              rip = the probed address
//   cld                           the agent is C (DF clear on calls)
//   mov rbx, rsp; and rsp, -16
//   mov rdi, DESCRIPTOR; mov rsi, rbx; call AGENT      once per probe at this address
//   mov rsp, rbx
//   mov rax, [rsp + 144]; push rax; popfq
//   mov reg, [rsp + 8*i]          every general register
//   lea rsp, [rsp + 288]
//   displaced instructions        RIP-relative fixed up; jmp/jcc as rel32; a call as
//                                 push rax; mov rax, RETURN; xchg [rsp], rax; jmp TARGET
//   jmp ADDRESS + LENGTH
// Vector and x87 registers need no saving: the agent is built with general registers only.
#include <cstdint>
#include <span>
#include <vector>

#include "arch/x86/probe_support/jump_patch.h"
#include "insn/x86/x86_insn.h"
#include "support/result.h"

namespace xprobe::arch::x86 {

inline constexpr uint64_t kTrampolineSize = 512;  // with up to kMaxProbesPerTrampoline calls
inline constexpr size_t kMaxProbesPerTrampoline = 8;
inline constexpr uint64_t kSavedBlockBytes = 160;  // 20 words
inline constexpr uint64_t kRedZone = 128;

using arch::Trampoline;
using arch::TrampolineTargets;

// The rel32 bytes that make `redirect`'s branch lead to `to`.
Result<std::vector<uint8_t>> build_redirect(const BranchRedirect& redirect, uint64_t to);

Result<Trampoline> build_trampoline(const JumpPatchPlan& plan, const TrampolineTargets& targets);

// The 5 bytes that replace the probed instruction(s): jmp rel32 from `from` to `to`.
Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to);

// `bytes` (decoded as `insn`, originally at `original`) as they must read at `moved_to` to
// access the same memory: the RIP-relative disp32 rewritten. Error if it no longer fits.
Result<std::vector<uint8_t>> relocate_rip_relative(std::span<const uint8_t> bytes, const insn::x86::X86Insn& insn,
                                                   uint64_t original, uint64_t moved_to);

}  // namespace xprobe::arch::x86
