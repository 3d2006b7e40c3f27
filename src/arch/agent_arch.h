#pragma once
// What the in-process agent needs of the machine it runs on, for the architecture it is
// compiled for (the agent is built by the target's compiler: tools/build_agent.py): raw
// system calls and their numbers, the clock a record is stamped with, where the trampoline's
// saved register block keeps the instruction and stack pointers, and how far a return moves
// the stack pointer. Freestanding: no header but <stdint.h>.
#if defined(__x86_64__)
#include "arch/x86/agent/x86_agent_arch.h"
#elif defined(__aarch64__)
#include "arch/arm64/agent/arm64_agent_arch.h"
#else
#error "the agent is built for x86-64 and AArch64 only"
#endif
