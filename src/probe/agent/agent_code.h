#pragma once
// The agent's machine code (agent.cpp built by tools/build_agent.py at build time), ready to
// be copied into a traced process; the trampolines call kAgentEntryOffset within it.
#include <cstddef>
#include <cstdint>

namespace xprobe::agent {

extern const uint8_t kAgentCode[];
extern const size_t kAgentCodeSize;
extern const size_t kAgentEntryOffset;

}  // namespace xprobe::agent
