#pragma once
// What the parts of target::Process (process.cpp, launch.cpp, wait_status.cpp,
// remote_syscall.cpp) share and nobody else needs.
#include <sys/ptrace.h>
#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace xprobe::target::detail {

// TRACESYSGOOD: a resumable remote call's stop at the system call's exit (remote_syscall.cpp)
// tells itself apart from a SIGTRAP (and PTRACE_GET_SYSCALL_INFO needs it).
inline constexpr long kTraceOptions = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                                      PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD;
inline constexpr uint64_t kPageSize = 4096;

inline std::string errno_text() { return std::strerror(errno); }

inline bool is_stop_signal(int signal) {
  return signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU;
}

}  // namespace xprobe::target::detail
