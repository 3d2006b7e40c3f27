#include "target/process.h"

#include <elf.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <optional>
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
  auto saved = get_registers(tid);
  if (!saved) return saved.error();
  auto abi = arch::syscall_abi(arch::thread_arch(saved->raw));
  if (!abi) return abi.error();
  if ((*abi)->resumable()) return resumable_syscall(tid, **abi, *saved, number, args);
  if (syscall_stub_ == 0) {
    // The stub goes over the code at the thread's instruction pointer: no other thread may run meanwhile.
    if (auto stopped = stop_all(); !stopped) return stopped.error();
  }
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
    // Wait for the next stop of this thread. Only a reaped stop may be resumed: a second PTRACE_CONT here would, if the
    // thread had meanwhile stopped at the stub's breakpoint, run it on past it into the empty
    // rest of the slot (torture-findings #6: zstd died of SIGSEGV at stub + 3), and if it had
    // not, fail and leave the thread with the stub's registers.
    auto stopped = wait_remote_call_stop(tid);
    if (!stopped) return stopped.error();
    result_status = *stopped;
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
  defer_signals(tid, deferred_signals);
  if (!after) return after.error();
  return (*abi)->result(after->raw);
}

void Process::defer_signals(pid_t tid, const std::vector<int>& signals) {
  for (int deferred : signals) {
    StopEvent event;
    event.kind = StopKind::Signal;
    event.tid = tid;
    event.signal = deferred;
    pending_.push_back(event);
  }
}

// A system-call instruction in the program's own code: the one the thread sits behind when
// stopped in a system call, else the first in its executable mappings (the vDSO first).
Result<uint64_t> Process::find_syscall_instruction(uint64_t ip, std::span<const uint8_t> instruction) {
  std::vector<uint8_t> bytes(instruction.size());
  if (ip >= instruction.size() && read(ip - instruction.size(), bytes) &&
      std::equal(bytes.begin(), bytes.end(), instruction.begin()))
    return ip - instruction.size();
  auto layout = maps();
  if (!layout) return layout.error();
  std::vector<const MapEntry*> code;
  for (const MapEntry& entry : *layout)
    if (entry.executable && entry.readable) code.push_back(&entry);
  std::stable_partition(code.begin(), code.end(), [](const MapEntry* entry) { return entry->path == "[vdso]"; });
  constexpr uint64_t kChunk = 64 * 1024;
  std::vector<uint8_t> chunk;
  for (const MapEntry* entry : code) {
    for (uint64_t at = entry->start; at < entry->end; at += kChunk - instruction.size()) {
      chunk.resize(std::min(kChunk, entry->end - at));
      if (!read(at, chunk)) break;
      auto found = std::search(chunk.begin(), chunk.end(), instruction.begin(), instruction.end());
      if (found != chunk.end()) return at + static_cast<uint64_t>(found - chunk.begin());
      if (chunk.size() < kChunk) break;
    }
  }
  return make_error(fmt::format("remote system call: no system-call instruction in the code of process {}", pid_));
}

// Bytes of executable memory no code of the program's reaches: the rest of the last page of an
// executable segment (PT_LOAD with PF_X, from the program headers the object's first mapping
// holds; the vDSO's included), past its p_memsz and below the next page, which no other
// segment covers. The first remote calls of a session, before xprobe has memory of its own,
// run a resumable stub from there (its bytes are put back after each call). 0: none found.
uint64_t Process::code_padding(uint64_t size) {
  auto layout = maps();
  if (!layout) return 0;
  auto executable = [&](uint64_t start, uint64_t end) {
    const MapEntry* entry = find_mapping(*layout, start);
    return entry != nullptr && entry->executable && entry->readable && end <= entry->end;
  };
  for (const MapEntry& first : *layout) {
    if (first.offset != 0 || !first.readable) continue;
    Elf64_Ehdr header{};
    if (!read(first.start, std::span(reinterpret_cast<uint8_t*>(&header), sizeof header))) continue;
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 || header.e_phnum > 64 ||
        header.e_phoff > first.end - first.start - header.e_phnum * sizeof(Elf64_Phdr))
      continue;
    std::vector<Elf64_Phdr> segments(header.e_phnum);
    if (!read(first.start + header.e_phoff,
              std::span(reinterpret_cast<uint8_t*>(segments.data()), segments.size() * sizeof(Elf64_Phdr))))
      continue;
    uint64_t lowest = ~uint64_t{0};
    for (const Elf64_Phdr& segment : segments)
      if (segment.p_type == PT_LOAD) lowest = std::min(lowest, segment.p_vaddr & ~(kPageSize - 1));
    if (lowest == ~uint64_t{0} || lowest > first.start) continue;
    const uint64_t bias = first.start - lowest;
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0 || segment.p_memsz == 0) continue;
      const uint64_t end = bias + segment.p_vaddr + segment.p_memsz;
      if (end < bias) continue;  // wrapped: not a real header
      const uint64_t start = (end + 15) & ~uint64_t{15};
      const uint64_t page_end = (end + kPageSize - 1) & ~(kPageSize - 1);
      if (start + size > page_end || !executable(start, start + size)) continue;
      const bool covered = std::any_of(segments.begin(), segments.end(), [&](const Elf64_Phdr& other) {
        const uint64_t other_start = bias + (other.p_vaddr & ~(kPageSize - 1)), other_end = bias + other.p_vaddr + other.p_memsz;
        return other.p_type == PT_LOAD && &other != &segment && other_start < page_end && other_end > start;
      });
      if (!covered) return start;
    }
  }
  return 0;
}

// The next stop of `tid` during a remote call (its wait status), or the process's end: kept for
// the event loop, which reports it, and an error here. An interrupted wait (SIGINT/SIGTERM
// reached xprobe) waits again.
Result<int> Process::wait_remote_call_stop(pid_t tid) {
  int status = 0;
  pid_t got = 0;
  do {
    got = ::waitpid(tid, &status, __WALL);
  } while (got < 0 && errno == EINTR);
  if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
    if (got > 0) {
      auto gone = classify(tid, status);
      if (gone && *gone) pending_.push_back(**gone);
    }
    return make_error(fmt::format("process {} ended during a remote system call", pid_));
  }
  return status;
}

// A remote call through a resumable stub (arch/syscall_abi.h), or before there is one, through
// a system-call instruction of the program's own: nothing of the program's is written, and the
// thread stops at the call's exit (PTRACE_SYSCALL) instead of at a breakpoint. The call ends by
// putting the thread back into the kind of stop it was in, before its registers are restored:
// only from there does the kernel restart (or fail with EINTR) a system call the thread was
// stopped in, as it would have without the remote call; resumed from the exit stop, the thread
// would return -ERESTARTSYS to the program (glibc: "The futex facility returned an unexpected
// error code", SIGABRT). A thread in a signal-delivery-stop gets its signal again (sent by the
// kernel on the resume from the exit stop; its siginfo put back), so that it can still be
// resumed with it; any other goes back to an interrupt stop (PTRACE_INTERRUPT: no signal, which
// a thread may block, as a new thread does until it runs). Killed at any moment, xprobe leaves a
// thread that resumes where it was (from the stub's resume block, or with its own registers),
// except within the first call of a session (the program's own system-call instruction,
// nothing behind it), which leaves the call's registers.
Result<int64_t> Process::resumable_syscall(pid_t tid, const arch::SyscallAbi& abi, const Registers& saved, int64_t number,
                                           std::span<const uint64_t> args) {
  Registers call = saved;
  if (auto loaded = abi.load(call.raw, number, args); !loaded) return loaded.error();
  siginfo_t stop_signal{};  // the signal of a signal-delivery-stop the thread is in, si_signo 0 for none
  if (stop_event(tid) != 0 || ::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &stop_signal) != 0) stop_signal.si_signo = 0;
  // Sent again, a signal the thread blocks (a forced one: a breakpoint's) would stay
  // pending and let it run on: such a thread goes back to an interrupt stop instead.
  uint64_t blocked = 0;
  if (stop_signal.si_signo > 0 &&
      (::ptrace(PTRACE_GETSIGMASK, tid, sizeof blocked, &blocked) != 0 || (blocked >> (stop_signal.si_signo - 1) & 1) != 0))
    stop_signal.si_signo = 0;
  uint64_t entry = syscall_stub_;
  std::vector<uint8_t> padding;  // the bytes under a stub in code padding, put back after the call
  if (entry == 0) {
    entry = code_padding(abi.stub().size());
    if (entry != 0) {
      padding.resize(abi.stub().size());
      if (!read(entry, padding) || !write(entry, abi.stub())) {
        (void)write(entry, padding);
        entry = 0;
        padding.clear();
      }
    }
  }
  auto put_padding_back = [&] {
    if (!padding.empty()) (void)write(entry, padding);  // harmless if it stays: nothing runs there
  };
  if (entry != 0) {
    const std::vector<uint8_t> block = abi.resume_block(saved.raw);
    if (auto written = write(entry + abi.resume_block_offset(), block); !written) {
      put_padding_back();
      return written.error();
    }
  } else {
    auto found = find_syscall_instruction(saved.ip(), abi.instruction());
    if (!found) return found.error();
    entry = *found;
  }
  call.set_ip(entry);
  if (auto set = set_registers(tid, call); !set) return set.error();
  std::vector<int> deferred_signals;
  std::optional<int64_t> result;
  int syscall_stops = 0;
  int inject = 0;  // the signal for the next resume
  for (;;) {
    const __ptrace_request request = result ? PTRACE_CONT : PTRACE_SYSCALL;
    if (::ptrace(request, tid, nullptr, static_cast<long>(inject)) != 0) {
      (void)set_registers(tid, saved);  // undone as far as it goes: the first error is the one reported
      return make_error(fmt::format("remote system call: cannot run thread {}: {}", tid, errno_text()));
    }
    inject = 0;
    auto stopped = wait_remote_call_stop(tid);
    if (!stopped) return stopped.error();
    const int status = *stopped;
    const int signal = WSTOPSIG(status);
    const int event = status >> 16;
    if (event != 0) {
      if (result && event == PTRACE_EVENT_STOP && stop_signal.si_signo == 0) break;  // back in an interrupt stop
      continue;  // a group-stop's (of the program's own): on
    }
    if (signal == (SIGTRAP | 0x80)) {  // a system-call stop (PTRACE_O_TRACESYSGOOD): the entry, then the exit
      if (++syscall_stops < 2) continue;
      auto now = get_registers(tid);
      if (!now) return now.error();
      result = abi.result(now->raw);
      if (stop_signal.si_signo != 0) {
        inject = stop_signal.si_signo;
      } else if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
        return make_error(fmt::format("remote system call: cannot stop thread {} again: {}", tid, errno_text()));
      }
      continue;
    }
    if (result && stop_signal.si_signo != 0 && signal == stop_signal.si_signo) {
      (void)::ptrace(PTRACE_SETSIGINFO, tid, nullptr, &stop_signal);
      break;
    }
    deferred_signals.push_back(signal);  // a signal-delivery-stop: delivered after we are done
  }
  if (auto set = set_registers(tid, saved); !set) return set.error();
  put_padding_back();
  threads_[tid] = ThreadState::Stopped;
  defer_signals(tid, deferred_signals);
  return *result;
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
  int64_t refusal = 0;  // the last mmap's error
  bool all_enomem = true;
  for (uint64_t start : free_ranges_near(*layout, near, size, reach, highest_end)) {
    uint64_t args[] = {start, size, static_cast<uint64_t>(prot), MAP_PRIVATE | MAP_ANONYMOUS | kMapFixedNoReplace,
                       ~uint64_t{0}, 0};
    auto mapped = remote_syscall(tid, SYS_mmap, args);
    if (!mapped) return mapped.error();
    if (*mapped < 0 && *mapped > -4096) {
      // ENOMEM for every range: out of memory or address space (its RLIMIT_AS). One range alone
      // may give it too (above what a 32-bit process can address).
      all_enomem = all_enomem && -*mapped == ENOMEM;
      refusal = -*mapped;
      continue;
    }
    uint64_t address = static_cast<uint64_t>(*mapped);
    if (address == start) return address;
    // An old kernel ignored MAP_FIXED_NOREPLACE: the mapping is somewhere else, and given back.
    // Its own failure leaves an unused anonymous mapping, nothing the program could notice.
    (void)remote_munmap(tid, address, size);
  }
  if (refusal != 0 && all_enomem)
    return make_error(fmt::format("process {} may not map {} more bytes (mmap: {}): its address-space limit (RLIMIT_AS, "
                                  "see prlimit --pid {}), its number of mappings (vm.max_map_count) or the system's memory is exhausted",
                                  pid_, size, std::strerror(ENOMEM), pid_));
  if (refusal != 0)
    return make_error(fmt::format("process {} refused to map {} bytes near 0x{:x}: {}", pid_, size, near,
                                  std::strerror(static_cast<int>(refusal))));
  return make_error(fmt::format("no free address range of {} bytes within {} bytes of 0x{:x} in process {}", size,
                                reach, near, pid_));
}

}  // namespace xprobe::target
