#pragma once
// What the in-process agent (probe/agent) needs of AArch64 (arch/agent_arch.h): raw system calls
// and their numbers, the clock a record is stamped with, the trampoline's saved register
// block, how far a return moves the stack pointer. Freestanding: no header but <stdint.h>.
#include <stdint.h>

namespace xprobe::agent::arch {

// include/uapi/asm-generic/unistd.h (arm64 uses the generic table)
inline constexpr long kSysGettid = 178;
inline constexpr long kSysRtSigaction = 134;
inline constexpr long kSysRtSigprocmask = 135;
inline constexpr long kSysTgkill = 131;
inline constexpr long kSysProcessVmReadv = 270;
inline constexpr long kSysGetcpu = 168;

// Words of the saved block (struct user_pt_regs order: x0..x30, sp, pc, pstate).
inline constexpr uint32_t kIpWord = 32;
inline constexpr uint32_t kSpWord = 31;
// Go's register ABI keeps the running goroutine's g in x28.
inline constexpr uint32_t kGoroutineWord = 28;

inline long syscall6(long number, long a, long b, long c, long d, long e, long f) {
  register long x8 __asm__("x8") = number;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
}

// The return address of a function entered with `registers`: the link register, x30.
// Calls `function(a, b)` with sp at `top` (16-aligned), back on the caller's stack after it.
// x19 keeps the caller's sp across the call (callee-saved).
inline void call_on_stack(uint64_t top, void (*function)(const void*, const void*), const void* a, const void* b) {
  register const void* x0 __asm__("x0") = a;
  register const void* x1 __asm__("x1") = b;
  register uint64_t x2 __asm__("x2") = top;
  register void (*x3)(const void*, const void*) __asm__("x3") = function;
  __asm__ volatile("mov x19, sp\n\t"
                   "mov sp, x2\n\t"
                   "blr x3\n\t"
                   "mov sp, x19"
                   : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
                   :
                   : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17",
                     "x18", "x19", "x30", "memory", "cc");
}

inline uint64_t return_address_at_entry(const uint64_t* registers) { return registers[30]; }

// The generic timer's virtual count (CNTVCT_EL0, readable at EL0 on Linux; the ISB keeps it
// from being read early), and the cpu from getcpu(2): arm64 has no cheap user-space cpu number.
inline uint64_t read_clock(uint32_t& cpu) {
  uint64_t count;
  __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(count) : : "memory");
  unsigned int number = 0;
  if (syscall6(kSysGetcpu, reinterpret_cast<long>(&number), 0, 0, 0, 0, 0) != 0) number = 0;
  cpu = number & 0xfff;
  return count;
}

// The thread pointer (tpidr_el0), readable from user space on every arm64 kernel.
inline uint64_t read_thread_pointer() {
  uint64_t base;
  __asm__ volatile("mrs %0, tpidr_el0" : "=r"(base));
  return base;
}

// Saved registers: the whole struct user_pt_regs, x0..x30, sp, pc, pstate.
inline constexpr uint32_t kSavedBlockWords = 34;
inline constexpr uint64_t kUnsavedBlockMask = 0;

// A function returns with sp as it was at its entry.
inline constexpr uint64_t kShortestReturnPop = 0;
inline constexpr uint64_t kLongestReturnPop = 0;

}  // namespace xprobe::agent::arch
