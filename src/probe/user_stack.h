#pragma once
// The user stack of a thread stopped at a probe, walked by its frame pointers as the kernel
// walks a user stack for perf's callchains: the probed instruction first, then each frame's
// return address, innermost first, at most kUserStackDepth (the kernel's hist
// HIST_STACKTRACE_DEPTH). At a function's first instruction the frame pointer is still the
// caller's, so the return address the entry sees comes second. The walk is as good as the
// program's frame pointers: code built without them ends it early or gives wrong callers. A
// chain that does not go up the stack, is misaligned or unreadable ends the walk (the memory is
// the program's: nothing read is believed beyond that).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "arch/probe_arch.h"

namespace xprobe::probe {

inline constexpr size_t kUserStackDepth = 16;

using ReadWords = std::function<bool(uint64_t address, std::span<uint8_t> into)>;

// `at_entry`: the thread is at the first instruction of the probed function.
std::vector<uint64_t> walk_user_stack(const arch::ProbeArch& arch, const arch::RegisterBlock& registers, bool at_entry,
                                      const ReadWords& read);

}  // namespace xprobe::probe
