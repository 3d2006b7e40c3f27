#pragma once
// What /proc tells about a process or thread that tracing needs (all through proc_status.h
// for the status files).
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "support/result.h"

namespace xprobe::target {

// The tids of `pid`, sorted; empty when it is gone.
std::vector<pid_t> list_tasks(pid_t pid);

// The process (thread group) thread `tid` belongs to; nullopt when the thread is gone.
std::optional<pid_t> thread_group_of(pid_t tid);

// " (it is already traced by process N)" when another tracer has `pid`, else "".
std::string tracer_description(pid_t pid);

// Why ptrace refused to attach to `pid` (EPERM), as one sentence that names what to change: the
// tracer it already has, another user's process (CAP_SYS_PTRACE), kernel.yama.ptrace_scope,
// or a process that is not dumpable.
std::string ptrace_refusal(pid_t pid);

// Whether thread `tid` of `pid` is traced by this process; nullopt when the thread is gone.
std::optional<bool> traced_by_us(pid_t pid, pid_t tid);

// Whether the kernel runs a thread of `pid` with an x86 user shadow stack (CET): then a
// call cannot be emulated (the hardware shadow stack would not get the return address).
bool uses_shadow_stack(pid_t pid);

// The seccomp mode of `pid` (0 none, 1 strict, 2 filter).
int seccomp_mode(pid_t pid);

// Whether `pid` is gone, a zombie, or has a SIGKILL on its way (killed from outside while we
// were handling one of its stops): its end is then the next event to wait for.
bool process_is_ending(pid_t pid);

// Whether `signal` is pending for thread `tid` and not blocked by it.
bool signal_pending_unblocked(pid_t pid, pid_t tid, int signal);

// The id `tid` (a thread of `pid`, or `pid` itself) has inside the process's own pid
// namespace (the last NSpid field: inside a container, not ours); `tid` when unknown.
pid_t id_in_own_namespace(pid_t pid, pid_t tid);

// Describes why `pid` cannot be traced, if something about it is visibly wrong (missing,
// zombie, kernel thread, ourselves); success means "try PTRACE_SEIZE".
Status check_traceable(pid_t pid);

}  // namespace xprobe::target
