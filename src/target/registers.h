#pragma once
// A thread's general registers as ptrace hands them over. The x86-64 layout is the only
// architecture-specific part of the target layer; other architectures add their own struct
// here and the arch/ layer converts it for the simulators.
#include <sys/user.h>

#include <cstdint>

namespace xprobe::target {

struct Registers {
  user_regs_struct raw{};

  uint64_t ip() const { return raw.rip; }
  uint64_t sp() const { return raw.rsp; }
  void set_ip(uint64_t value) { raw.rip = value; }
  void set_sp(uint64_t value) { raw.rsp = value; }
};

}  // namespace xprobe::target
