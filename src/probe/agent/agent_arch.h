#pragma once
// What the in-process agent needs of the machine it runs on, for the architecture it is
// compiled for (the agent is built by the target's compiler: tools/build_agent.py): raw
// system calls and their numbers, the clock a record is stamped with, and where the
// trampoline's saved register block keeps the instruction and stack pointers. Freestanding:
// no header but <stdint.h>.
#include <stdint.h>

namespace xprobe::agent::arch {

#if defined(__x86_64__)

// arch/x86/entry/syscalls/syscall_64.tbl
inline constexpr long kSysGettid = 186;
inline constexpr long kSysRtSigaction = 13;
inline constexpr long kSysRtSigprocmask = 14;
inline constexpr long kSysTgkill = 234;
inline constexpr long kSysProcessVmReadv = 310;

// Words of the saved block (struct user_regs_struct order).
inline constexpr uint32_t kIpWord = 16;
inline constexpr uint32_t kSpWord = 19;

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

// The TSC, and the cpu from TSC_AUX (Linux keeps the cpu number in its low 12 bits).
inline uint64_t read_clock(uint32_t& cpu) {
  uint32_t low, high, aux;
  __asm__ volatile("rdtscp" : "=a"(low), "=d"(high), "=c"(aux));
  cpu = aux & 0xfff;
  return (static_cast<uint64_t>(high) << 32) | low;
}

#elif defined(__aarch64__)

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

#else
#error "the agent is built for x86-64 and AArch64 only"
#endif

}  // namespace xprobe::agent::arch
