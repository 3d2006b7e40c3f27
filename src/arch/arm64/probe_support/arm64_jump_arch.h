#pragma once
// The jump engine's JumpArch for AArch64 code: one B per probe planned by jump_patch.h,
// trampolines by trampoline.h, the generic timer's virtual count as the agent's clock. Its
// clock is the host's, so it exists in builds for arm64 hosts only; the planner and the
// trampoline writer are pure and tested on any host.
#include "arch/jump_arch.h"

namespace xprobe::arch::arm64 {

#if defined(__aarch64__)
const JumpArch& aarch64_jump_arch();
#endif

}  // namespace xprobe::arch::arm64
