#pragma once
// A thread's general registers as ptrace hands them over, in the tracer's own layout:
// x86-64's user_regs_struct, or on an arm64 host glibc's user_regs_struct, which is the
// kernel's user_pt_regs (x0..x30, sp, pc, pstate; read with PTRACE_GETREGSET NT_PRSTATUS).
// The arch/ layer converts it for the simulators.
#include <sys/user.h>

#include <cstdint>

namespace xprobe::target {

struct Registers {
  user_regs_struct raw{};

#if defined(__aarch64__)
  uint64_t ip() const { return raw.pc; }
  uint64_t sp() const { return raw.sp; }
  void set_ip(uint64_t value) { raw.pc = value; }
  void set_sp(uint64_t value) { raw.sp = value; }
#else
  uint64_t ip() const { return raw.rip; }
  uint64_t sp() const { return raw.rsp; }
  void set_ip(uint64_t value) { raw.rip = value; }
  void set_sp(uint64_t value) { raw.rsp = value; }
#endif
};

}  // namespace xprobe::target
