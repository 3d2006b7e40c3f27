#include "target/process.h"

#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "arch/registry.h"
#include "target/free_ranges.h"
#include "target/proc_queries.h"
#include "target/process_internal.h"

namespace xprobe::target {

using namespace detail;

// Running system calls inside a stopped thread of the process (the convention is
// arch/syscall_abi.h's), and mapping memory with them.
int Process::stop_event(pid_t tid) const {
  siginfo_t info{};
  if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &info) != 0) return 0;
  // A ptrace event stop reports SIGTRAP | event << 8; a signal's own si_code is below 0x100
  // (or negative: SI_TKILL, SI_QUEUE).
  return info.si_signo == SIGTRAP && info.si_code > 0 ? info.si_code >> 8 : 0;
}

bool Process::usable_for_remote_call(pid_t tid) const {
  auto state = threads_.find(tid);
  if (state == threads_.end() || state->second != ThreadState::Stopped) return false;
  const int event = stop_event(tid);
  return event != PTRACE_EVENT_EXIT && event != PTRACE_EVENT_VFORK;
}

pid_t Process::thread_for_remote_call() const {
  pid_t fallback = 0;
  for (const auto& [tid, state] : threads_) {
    if (state != ThreadState::Stopped) continue;
    const int event = stop_event(tid);
    if (event == 0 || event == PTRACE_EVENT_STOP) return tid;
    if (fallback == 0 && usable_for_remote_call(tid)) fallback = tid;
  }
  return fallback;
}

// A thread stopped at a ptrace event inside a system call (clone, fork, exec) has not finished
// that call: resumed, the kernel first stores the call's return value in its result register.
// Run from there, the stub would execute system call number <return value> (the child's tid, 0 after an exec),
// and restoring the registers saved at the event would then overwrite the real return value
// (clone3 "failed" with ENOSYS, glibc retried with clone: two threads on one stack). So the
// call is first finished: an interrupt is queued behind the event stop, and the resume stops at
// the next return to user mode, before any instruction of the program.
Status Process::settle_for_remote_call(pid_t tid) {
  const int event = stop_event(tid);
  if (event == 0 || event == PTRACE_EVENT_STOP) return {};
  if (event == PTRACE_EVENT_EXIT || event == PTRACE_EVENT_VFORK) {
    return make_error(fmt::format("remote system call: thread {} is {}", tid,
                                  event == PTRACE_EVENT_EXIT ? "exiting" : "waiting for its vfork child"));
  }
  if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0 || ::ptrace(PTRACE_CONT, tid, nullptr, 0) != 0) {
    return make_error(fmt::format("remote system call: cannot finish the system call of thread {}: {}", tid, errno_text()));
  }
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(tid, &status, __WALL);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
      if (got > 0) {
        auto gone = classify(tid, status);
        if (gone && *gone) pending_.push_back(**gone);
      }
      return make_error(fmt::format("process {} ended during a remote system call", pid_));
    }
    const int stopped_event = status >> 16;
    if (stopped_event == PTRACE_EVENT_STOP) {
      if (is_stop_signal(WSTOPSIG(status))) group_stopped_.insert(tid);  // the program's own group-stop began
      return {};
    }
    if (stopped_event == 0) {
      // A signal came first (also at the return to user mode): it is delivered later.
      StopEvent signal_event;
      signal_event.kind = StopKind::Signal;
      signal_event.tid = tid;
      signal_event.signal = WSTOPSIG(status);
      if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &signal_event.info) != 0) std::memset(&signal_event.info, 0, sizeof signal_event.info);
      pending_.push_back(signal_event);
      return {};
    }
    // Another event of the same call (vfork done, exit): go on to the interrupt stop.
    if (stopped_event == PTRACE_EVENT_EXIT) return make_error(fmt::format("remote system call: thread {} is exiting", tid));
    if (::ptrace(PTRACE_CONT, tid, nullptr, 0) != 0) {
      return make_error(fmt::format("remote system call: cannot finish the system call of thread {}: {}", tid, errno_text()));
    }
  }
}

Result<int64_t> Process::remote_syscall(pid_t tid, int64_t number, std::span<const uint64_t> args) {
  if (!owns(tid) || threads_[tid] != ThreadState::Stopped) {
    return make_error(fmt::format("remote system call: thread {} is not stopped", tid));
  }
  if (args.size() > 6) return make_error("remote system call: at most 6 arguments");
  // Under a seccomp filter the injected call could kill the program or be refused in ways we
  // cannot tell apart from a real failure: do not try.
  if (int mode = seccomp_mode(pid_); mode != 0) {
    return make_error(fmt::format("process {} runs under seccomp (mode {}): xprobe does not inject system calls "
                                  "into it (out-of-line slots need one mmap)",
                                  pid_, mode));
  }
  if (auto settled = settle_for_remote_call(tid); !settled) return settled.error();
  if (syscall_stub_ == 0) {
    // The stub goes over the code at the thread's instruction pointer: no other thread may run meanwhile.
    if (auto stopped = stop_all(); !stopped) return stopped.error();
  }
  auto saved = get_registers(tid);
  if (!saved) return saved.error();
  auto abi = arch::syscall_abi(arch::thread_arch(saved->raw));
  if (!abi) return abi.error();
  Registers call = *saved;
  if (auto loaded = (*abi)->load(call.raw, number, args); !loaded) return loaded.error();
  const std::span<const uint8_t> stub_code = (*abi)->stub();
  uint64_t stub = syscall_stub_ != 0 ? syscall_stub_ : saved->ip();
  std::vector<uint8_t> original(stub_code.size());
  if (syscall_stub_ == 0) {
    if (auto read_back = read(stub, original); !read_back) return read_back.error();
    if (auto patched = write(stub, stub_code); !patched) return patched.error();
  }
  auto restore_code = [&]() -> Status {
    if (syscall_stub_ == 0) return write(stub, original);
    return {};
  };
  call.set_ip(stub);
  if (auto set = set_registers(tid, call); !set) {
    (void)restore_code();  // undone as far as it goes: the first error is the one reported
    return set.error();
  }
  std::vector<int> deferred_signals;
  int result_status = 0;
  for (;;) {
    if (::ptrace(PTRACE_CONT, tid, nullptr, 0) != 0) {
      // Undone as far as it goes: the first error is the one reported.
      (void)restore_code();
      (void)set_registers(tid, *saved);
      return make_error(fmt::format("remote system call: cannot run thread {}: {}", tid, errno_text()));
    }
    // Wait for the next stop of this thread; an interrupted wait (SIGINT/SIGTERM reached xprobe)
    // waits again. Only a reaped stop may be resumed: a second PTRACE_CONT here would, if the
    // thread had meanwhile stopped at the stub's breakpoint, run it on past it into the empty
    // rest of the slot (torture-findings #6: zstd died of SIGSEGV at stub + 3), and if it had
    // not, fail and leave the thread with the stub's registers.
    pid_t got = 0;
    do {
      got = ::waitpid(tid, &result_status, __WALL);
    } while (got < 0 && errno == EINTR);
    if (got < 0 || WIFEXITED(result_status) || WIFSIGNALED(result_status)) {
      if (got > 0) {
        auto gone = classify(tid, result_status);
        if (gone && *gone) pending_.push_back(**gone);
      }
      return make_error(fmt::format("process {} ended during a remote system call", pid_));
    }
    int signal = WSTOPSIG(result_status);
    int ptrace_event = result_status >> 16;
    if (ptrace_event == 0 && signal == SIGTRAP) {
      auto now = get_registers(tid);
      if (now && now->ip() == stub + (*abi)->stub_stop_offset()) break;
    }
    if (ptrace_event == 0 && signal != SIGTRAP) deferred_signals.push_back(signal);  // delivered after we are done
  }
  auto after = get_registers(tid);
  if (auto restored = restore_code(); !restored) return restored.error();
  if (auto set = set_registers(tid, *saved); !set) return set.error();
  threads_[tid] = ThreadState::Stopped;
  for (int deferred : deferred_signals) {
    StopEvent event;
    event.kind = StopKind::Signal;
    event.tid = tid;
    event.signal = deferred;
    pending_.push_back(event);
  }
  if (!after) return after.error();
  return (*abi)->result(after->raw);
}

Result<std::span<const uint8_t>> Process::syscall_stub_code(pid_t tid) {
  auto registers = get_registers(tid);
  if (!registers) return registers.error();
  auto abi = arch::syscall_abi(arch::thread_arch(registers->raw));
  if (!abi) return abi.error();
  return (*abi)->stub();
}

Status Process::install_syscall_stub(pid_t tid, uint64_t address) {
  auto stub = syscall_stub_code(tid);
  if (!stub) return stub.error();
  if (auto written = write(address, *stub); !written) return written;
  syscall_stub_ = address;
  return {};
}

Result<uint64_t> Process::remote_mmap_at(pid_t tid, uint64_t address, uint64_t size, int prot) {
  constexpr uint64_t kMapFixedNoReplace = 0x100000;
  const uint64_t args[] = {address, size, static_cast<uint64_t>(prot), MAP_PRIVATE | MAP_ANONYMOUS | kMapFixedNoReplace,
                           ~uint64_t{0}, 0};
  auto mapped = remote_syscall(tid, SYS_mmap, args);
  if (!mapped) return mapped.error();
  if (*mapped < 0 && *mapped > -4096)
    return make_error(fmt::format("cannot map {} bytes at 0x{:x} in process {}: {}", size, address, pid_, std::strerror(static_cast<int>(-*mapped))));
  if (static_cast<uint64_t>(*mapped) != address) {
    // An old kernel ignored MAP_FIXED_NOREPLACE and put it elsewhere: not what was asked.
    static_cast<void>(remote_munmap(tid, static_cast<uint64_t>(*mapped), size));
    return make_error(fmt::format("cannot map {} bytes at 0x{:x} in process {}: the range is taken", size, address, pid_));
  }
  return address;
}

Result<int64_t> Process::remote_munmap(pid_t tid, uint64_t address, uint64_t size) {
  uint64_t args[] = {address, size};
  return remote_syscall(tid, SYS_munmap, args);
}

Result<uint64_t> Process::remote_mmap_near(pid_t tid, uint64_t near, uint64_t size, int prot, uint64_t reach,
                                           uint64_t highest_end) {
  auto layout = maps();
  if (!layout) return layout.error();
  size = (size + kPageSize - 1) & ~(kPageSize - 1);
  constexpr uint64_t kMapFixedNoReplace = 0x100000;
  for (uint64_t start : free_ranges_near(*layout, near, size, reach, highest_end)) {
    uint64_t args[] = {start, size, static_cast<uint64_t>(prot), MAP_PRIVATE | MAP_ANONYMOUS | kMapFixedNoReplace,
                       ~uint64_t{0}, 0};
    auto mapped = remote_syscall(tid, SYS_mmap, args);
    if (!mapped) return mapped.error();
    if (*mapped < 0 && *mapped > -4096) continue;
    uint64_t address = static_cast<uint64_t>(*mapped);
    if (address == start) return address;
    // An old kernel ignored MAP_FIXED_NOREPLACE: the mapping is somewhere else, and given back.
    // Its own failure leaves an unused anonymous mapping, nothing the program could notice.
    (void)remote_munmap(tid, address, size);
  }
  return make_error(fmt::format("no free address range of {} bytes within {} bytes of 0x{:x} in process {}", size,
                                reach, near, pid_));
}

}  // namespace xprobe::target
