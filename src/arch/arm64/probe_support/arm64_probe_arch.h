#pragma once
// The trap engine's ProbeArch for AArch64 code: BRK #0 as the breakpoint (breakpoint.h), the
// paths of execution_plan.h, AAPCS64 (the return address in x30 at entry, the return value in
// x0). Its register block is the one an arm64 tracer's ptrace hands over (user_pt_regs), so it
// exists in builds for arm64 hosts only; everything it does is pure and tested on any host
// through execution_plan.h, emulation.h and registers.h.
#include <memory>

#include "arch/probe_arch.h"

namespace xprobe::arch::arm64 {

#if defined(__aarch64__)
std::unique_ptr<ProbeArch> make_probe_arch();
#endif

}  // namespace xprobe::arch::arm64
