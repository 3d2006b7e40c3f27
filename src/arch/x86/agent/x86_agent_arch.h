#pragma once
// What the in-process agent (probe/agent) needs of x86-64 (arch/agent_arch.h): raw system calls
// and their numbers, the clock a record is stamped with, the trampoline's saved register
// block, how far a return moves the stack pointer. Freestanding: no header but <stdint.h>.
#include <stdint.h>

namespace xprobe::agent::arch {

// arch/x86/entry/syscalls/syscall_64.tbl
inline constexpr long kSysGettid = 186;
inline constexpr long kSysRtSigaction = 13;
inline constexpr long kSysRtSigprocmask = 14;
inline constexpr long kSysTgkill = 234;
inline constexpr long kSysProcessVmReadv = 310;

// Words of the saved block (struct user_regs_struct order).
inline constexpr uint32_t kIpWord = 16;
inline constexpr uint32_t kSpWord = 19;
// Go's register ABI keeps the running goroutine's g in r14.
inline constexpr uint32_t kGoroutineWord = 1;

inline long syscall6(long number, long a, long b, long c, long d, long e, long f) {
  long result;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}

// The return address of a function entered with `registers`: the call just pushed it.
inline uint64_t return_address_at_entry(const uint64_t* registers) {
  return *reinterpret_cast<const uint64_t*>(registers[kSpWord]);
}

// Calls `function(a, b)` with the stack pointer at `top` (16-aligned), back on the caller's
// stack after it. rbx keeps the caller's rsp across the call (callee-saved).
inline void call_on_stack(uint64_t top, void (*function)(const void*, const void*), const void* a, const void* b) {
  __asm__ volatile("mov %%rsp, %%rbx\n\t"
                   "mov %%rcx, %%rsp\n\t"
                   "call *%%rax\n\t"
                   "mov %%rbx, %%rsp"
                   : "+D"(a), "+S"(b), "+a"(function), "+c"(top)
                   :
                   : "rbx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc");
}

// The TSC, and the cpu from TSC_AUX (Linux keeps the cpu number in its low 12 bits).
inline uint64_t read_clock(uint32_t& cpu) {
  uint32_t low, high, aux;
  __asm__ volatile("rdtscp" : "=a"(low), "=d"(high), "=c"(aux));
  cpu = aux & 0xfff;
  return (static_cast<uint64_t>(high) << 32) | low;
}

// The thread pointer (fs_base). rdfsbase faults unless the kernel enabled FSGSBASE: the
// tracer only lets the agent call this when the kernel says so (AT_HWCAP2).
inline uint64_t read_thread_pointer() {
  uint64_t base;
  __asm__ volatile("rdfsbase %0" : "=r"(base));
  return base;
}

// Saved registers: the trampoline (arch/x86/probe_support/trampoline.h) stores the first
// words of struct user_regs_struct, r15 .. rsp; orig_rax and cs are left without the
// thread's value.
inline constexpr uint32_t kSavedBlockWords = 20;
inline constexpr uint64_t kUnsavedBlockMask = (uint64_t{1} << 15) | (uint64_t{1} << 17);

// How far above a frame's entry sp the sp is right after its function returned: ret pops the
// return address, `ret imm16` up to 0xffff bytes more.
inline constexpr uint64_t kShortestReturnPop = 8;
inline constexpr uint64_t kLongestReturnPop = 8 + 0xffff;

}  // namespace xprobe::agent::arch
