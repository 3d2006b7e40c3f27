#pragma once
// The jump engine's JumpArch for x86-64 code: jmp rel32 patches planned by jump_patch.h,
// trampolines by trampoline.h, the TSC as the agent's clock. Its clock is the host's, so it
// exists in builds for x86-64 hosts only.
#include "arch/jump_arch.h"

namespace xprobe::arch::x86 {

#if defined(__x86_64__)
const JumpArch& x86_64_jump_arch();
#endif

}  // namespace xprobe::arch::x86
