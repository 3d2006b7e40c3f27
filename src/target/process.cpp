#include "target/process.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "target/wait.h"

namespace xprobe::target {
namespace {

constexpr long kTraceOptions = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                               PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT;
constexpr uint64_t kPageSize = 4096;
#if defined(__x86_64__)
// __USER32_CS of x86-64 Linux: the thread runs 32-bit (i386) code.
constexpr uint64_t kUser32CodeSegment = 0x23;
#endif

std::string errno_text() { return std::strerror(errno); }

std::map<pid_t, std::deque<int>>& stash() {
  static std::map<pid_t, std::deque<int>> statuses;
  return statuses;
}

bool is_stop_signal(int signal) {
  return signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU;
}

Result<std::string> find_program(const std::string& name) {
  auto executable = [](const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return make_error("no program given");
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), F_OK) != 0) return make_error(fmt::format("program not found: {}", name));
    if (!executable(name)) return make_error(fmt::format("cannot execute {}: not an executable file", name));
    return name;
  }
  const char* path_env = std::getenv("PATH");
  std::string search = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream dirs(search);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return make_error(fmt::format("program not found: {} (not in PATH)", name));
}

std::vector<pid_t> list_tasks(pid_t pid) {
  std::vector<pid_t> tids;
  std::string path = fmt::format("/proc/{}/task", pid);
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return tids;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    tids.push_back(static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10)));
  }
  ::closedir(dir);
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::string tracer_of(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("TracerPid:", 0) == 0) {
      long tracer = std::strtol(line.c_str() + 10, nullptr, 10);
      if (tracer != 0) return fmt::format(" (it is already traced by process {})", tracer);
    }
  }
  return "";
}

// Whether thread `tid` is traced by this process; nullopt when the thread is gone.
std::optional<bool> traced_by_us(pid_t pid, pid_t tid) {
  std::ifstream status(fmt::format("/proc/{}/task/{}/status", pid, tid));
  if (!status) return std::nullopt;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("TracerPid:", 0) == 0) return std::strtol(line.c_str() + 10, nullptr, 10) == ::getpid();
  }
  return std::nullopt;
}

}  // namespace

bool Process::all_stopped() const {
  for (const auto& [tid, state] : threads_)
    if (state != ThreadState::Stopped) return false;
  return true;
}

int seccomp_mode(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Seccomp:", 0) == 0) return static_cast<int>(std::strtol(line.c_str() + 8, nullptr, 10));
  }
  return 0;
}

std::optional<int> take_stashed_status(pid_t tid) {
  auto it = stash().find(tid);
  if (it == stash().end() || it->second.empty()) return std::nullopt;
  int status = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) stash().erase(it);
  return status;
}

void stash_status(pid_t tid, int status) { stash()[tid].push_back(status); }

bool uses_shadow_stack(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("x86_Thread_features:", 0) == 0) return line.find("shstk") != std::string::npos;
  }
  return false;
}

bool process_is_ending(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  if (!status) return true;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("State:", 0) == 0 && (line.find('Z') != std::string::npos || line.find('X') != std::string::npos))
      return true;
    if (line.rfind("ShdPnd:", 0) == 0 || line.rfind("SigPnd:", 0) == 0) {
      const uint64_t pending = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
      if (pending & (uint64_t{1} << (SIGKILL - 1))) return true;
    }
  }
  return false;
}

Status check_traceable(pid_t pid) {
  if (pid <= 0) return make_error(fmt::format("invalid process id {}", pid));
  if (pid == ::getpid()) return make_error("xprobe cannot trace itself");
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!stat_file || !std::getline(stat_file, stat)) return make_error(fmt::format("no such process: {}", pid));
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return make_error(fmt::format("cannot parse /proc/{}/stat", pid));
  std::istringstream fields(stat.substr(paren + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0, tty = 0, tpgid = 0;
  unsigned long flags = 0;
  fields >> state >> ppid >> pgrp >> session >> tty >> tpgid >> flags;
  if (state == "Z" || state == "X") {
    return make_error(fmt::format("process {} is a zombie: it has exited and waits for its parent to reap it", pid));
  }
  constexpr unsigned long kKernelThreadFlag = 0x00200000;  // PF_KTHREAD
  if (flags & kKernelThreadFlag) {
    return make_error(fmt::format("process {} is a kernel thread: only user-space processes can be traced", pid));
  }
  return {};
}

Process::Process(pid_t pid, bool launched) : pid_(pid), launched_(launched) {}

Process::~Process() {
  if (!alive_) {
    if (mem_fd_ >= 0) ::close(mem_fd_);
    return;
  }
  if (launched_) {
    (void)kill();
  } else {
    (void)detach();
  }
  if (mem_fd_ >= 0) ::close(mem_fd_);
}

Status Process::open_memory() {
  if (mem_fd_ >= 0) ::close(mem_fd_);
  mem_fd_ = ::open(fmt::format("/proc/{}/mem", pid_).c_str(), O_RDWR | O_CLOEXEC);
  if (mem_fd_ < 0) return make_error(fmt::format("cannot open /proc/{}/mem: {}", pid_, errno_text()));
  return {};
}

Result<std::unique_ptr<Process>> Process::launch(const std::vector<std::string>& argv, const LaunchOptions& options) {
  if (argv.empty()) return make_error("no program given");
  auto path = find_program(argv[0]);
  if (!path) return path.error();

  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) return make_error(fmt::format("pipe: {}", errno_text()));
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return make_error(fmt::format("fork: {}", errno_text()));
  if (pid == 0) {
    ::close(error_pipe[0]);
    // Stop so that the parent can PTRACE_SEIZE us (SEIZE gives PTRACE_LISTEN and clean
    // group-stop reporting, which PTRACE_TRACEME does not).
    ::raise(SIGSTOP);
    ::execv(path->c_str(), args.data());
    int error = errno;
    ssize_t ignored = ::write(error_pipe[1], &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }
  ::close(error_pipe[1]);
  auto fail = [&](std::string message) -> Result<std::unique_ptr<Process>> {
    ::kill(pid, SIGKILL);
    for (;;) {
      int status = 0;
      const pid_t got = ::waitpid(pid, &status, __WALL);
      if (got < 0 && errno == EINTR) continue;  // a second SIGINT must not leave a zombie
      if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) break;
    }
    ::close(error_pipe[0]);
    return make_error(std::move(message));
  };

  int status = 0;
  pid_t stopped = 0;
  do {
    stopped = ::waitpid(pid, &status, WUNTRACED);
    // SIGINT/SIGTERM reached xprobe (StopSignals) while the child was on its way to its
    // SIGSTOP: it has run none of the program, so it is killed and that is the whole story.
    if (stopped < 0 && errno == EINTR && stop_requested()) return fail("interrupted before the program started");
  } while (stopped < 0 && errno == EINTR);
  if (stopped != pid || !WIFSTOPPED(status)) return fail("the new process did not stop before exec");
  if (stop_requested()) return fail("interrupted before the program started");
  long seize_options = kTraceOptions | (options.kill_on_tracer_exit ? PTRACE_O_EXITKILL : 0);
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, seize_options) != 0) {
    return fail(fmt::format("ptrace(PTRACE_SEIZE) of the new process failed: {}", errno_text()));
  }
  ::kill(pid, SIGCONT);
  std::unique_ptr<Process> process(new Process(pid, true));
  for (;;) {
    int wait_status = 0;
    pid_t got = ::waitpid(pid, &wait_status, __WALL);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("waitpid: {}", errno_text()));
    }
    if (WIFEXITED(wait_status) || WIFSIGNALED(wait_status)) {
      process->alive_ = false;
      int exec_error = 0;
      std::string message = fmt::format("{} exited before it could be traced", argv[0]);
      if (::read(error_pipe[0], &exec_error, sizeof exec_error) == static_cast<ssize_t>(sizeof exec_error)) {
        message = fmt::format("cannot execute {}: {}", *path, std::strerror(exec_error));
      }
      ::close(error_pipe[0]);
      return make_error(message);
    }
    int signal = WSTOPSIG(wait_status);
    int event = wait_status >> 16;
    if (event == PTRACE_EVENT_EXEC) break;
    int deliver = 0;
    if (event == 0 && signal != SIGSTOP && signal != SIGCONT) deliver = signal;  // ours are SIGSTOP/SIGCONT
    ::ptrace(PTRACE_CONT, pid, nullptr, deliver);
  }
  ::close(error_pipe[0]);
  process->threads_[pid] = ThreadState::Stopped;
  if (auto opened = process->open_memory(); !opened) return opened.error();
  set_wake_thread(pid);
  return process;
}

Result<std::unique_ptr<Process>> Process::attach(pid_t pid) {
  if (auto traceable = check_traceable(pid); !traceable) return traceable.error();
  std::unique_ptr<Process> process(new Process(pid, false));
  // Threads may be created while we attach; those created by already-seized threads are
  // attached by TRACECLONE, the others are found by scanning again until nothing is new.
  std::set<pid_t> seized;
  for (bool found_new = true; found_new;) {
    found_new = false;
    for (pid_t tid : list_tasks(pid)) {
      if (seized.count(tid) || process->threads_.count(tid)) continue;
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, kTraceOptions) != 0) {
        int error = errno;
        if (error == ESRCH && tid != pid) continue;  // the thread exited meanwhile
        if (error == EPERM && tid != pid) {
          std::optional<bool> ours = traced_by_us(pid, tid);
          if (!ours) continue;  // gone meanwhile
          if (*ours) {
            // Created meanwhile by a thread we had seized, and attached with it (TRACECLONE):
            // its first stop is on its way.
            process->threads_.emplace(tid, ThreadState::Starting);
            found_new = true;
            continue;
          }
        }
        std::string reason;
        if (error == EPERM) {
          reason = fmt::format(
              "not permitted to trace process {}: ptrace refused{} (tracing another user's process needs "
              "CAP_SYS_PTRACE; /proc/sys/kernel/yama/ptrace_scope may forbid attaching to non-children)",
              pid, tracer_of(pid));
        } else if (error == ESRCH) {
          reason = fmt::format("no such process: {}", pid);
        } else {
          reason = fmt::format("cannot attach to process {}: {}", pid, std::strerror(error));
        }
        for (pid_t done : seized) ::ptrace(PTRACE_DETACH, done, nullptr, 0);
        process->alive_ = false;
        process->threads_.clear();
        return make_error(reason);
      }
      seized.insert(tid);
      ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
      process->threads_[tid] = ThreadState::Running;
      found_new = true;
    }
  }
  if (auto opened = process->open_memory(); !opened) return opened.error();
  if (auto stopped = process->stop_all(); !stopped) return stopped.error();
  set_wake_thread(pid);
  return process;
}

Result<std::unique_ptr<Process>> Process::adopt_child(pid_t pid) {
  std::unique_ptr<Process> process(new Process(pid, false));
  process->threads_[pid] = ThreadState::Starting;
  process->waiting_for_interrupt_ = true;
  if (auto stopped = process->wait_until_stopped(pid); !stopped) return stopped.error();
  process->waiting_for_interrupt_ = false;
  // The first stop of an auto-attached child is a NewThread event: not news to anyone.
  std::erase_if(process->pending_, [&](const StopEvent& event) { return event.kind == StopKind::NewThread; });
  if (!process->owns(pid)) return make_error(fmt::format("child process {} vanished", pid));
  if (auto opened = process->open_memory(); !opened) return opened.error();
  return process;
}

Result<std::optional<StopEvent>> Process::classify(pid_t tid, int status) {
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    std::erase_if(pending_, [&](const StopEvent& event) { return event.tid == tid; });
    StopEvent event;
    event.tid = tid;
    if (tid == pid_) {
      alive_ = false;
      threads_.clear();
      pending_.clear();
      event.kind = WIFEXITED(status) ? StopKind::Exited : StopKind::Killed;
      event.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
      event.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      return std::optional<StopEvent>(event);
    }
    threads_.erase(tid);
    event.kind = StopKind::ThreadExited;
    return std::optional<StopEvent>(event);
  }
  if (!WIFSTOPPED(status)) return std::optional<StopEvent>();
  int signal = WSTOPSIG(status);
  int ptrace_event = status >> 16;
  ThreadState previous = threads_.count(tid) ? threads_[tid] : ThreadState::Running;
  threads_[tid] = ThreadState::Stopped;
  StopEvent event;
  event.tid = tid;
  unsigned long message = 0;
  switch (ptrace_event) {
    case PTRACE_EVENT_EXEC: {
      threads_.clear();
      threads_[pid_] = ThreadState::Stopped;
      syscall_stub_ = 0;  // its memory is gone with the old image
      std::erase_if(pending_, [&](const StopEvent& pending) { return pending.tid != pid_; });
      if (auto opened = open_memory(); !opened) return opened.error();
      event.tid = pid_;
      event.kind = StopKind::Exec;
      return std::optional<StopEvent>(event);
    }
    case PTRACE_EVENT_CLONE: {
      ::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &message);
      pid_t child = static_cast<pid_t>(message);
      // Known already (found by attach()'s scan, or its first stop came first): keep its state.
      threads_.emplace(child, ThreadState::Starting);
      if (auto early = take_stashed_status(child)) {
        auto child_event = classify(child, *early);
        if (!child_event) return child_event.error();
        if (*child_event) pending_.push_back(**child_event);
      }
      if (waiting_for_interrupt_) return std::optional<StopEvent>();  // the parent stays stopped
      if (auto resumed = resume(tid); !resumed) return resumed.error();
      return std::optional<StopEvent>();
    }
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
      ::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &message);
      event.kind = ptrace_event == PTRACE_EVENT_FORK ? StopKind::Fork : StopKind::Vfork;
      event.new_pid = static_cast<pid_t>(message);
      return std::optional<StopEvent>(event);
    case PTRACE_EVENT_EXIT:
      if (exit_listener_) exit_listener_->thread_exiting(tid);
      if (tid == pid_ && threads_.size() > 1) {
        // A leader that exits before its threads stays a zombie until they are gone: it will
        // not stop again, so nobody may wait for it.
        ::ptrace(PTRACE_CONT, tid, nullptr, 0);
        threads_[tid] = ThreadState::Starting;
        leader_exiting_ = true;
        return std::optional<StopEvent>();
      }
      if (waiting_for_interrupt_) return std::optional<StopEvent>();
      ::ptrace(PTRACE_CONT, tid, nullptr, 0);
      threads_[tid] = ThreadState::Running;
      return std::optional<StopEvent>();
    case PTRACE_EVENT_STOP:
      if (is_stop_signal(signal)) {
        group_stopped_.insert(tid);
        if (waiting_for_interrupt_) return std::optional<StopEvent>();
        ::ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);
        threads_[tid] = ThreadState::Listening;
        return std::optional<StopEvent>();
      }
      group_stopped_.erase(tid);
      if (previous == ThreadState::Starting) {
        event.kind = StopKind::NewThread;
        return std::optional<StopEvent>(event);
      }
      if (waiting_for_interrupt_) return std::optional<StopEvent>();
      // A late interrupt stop (we asked while another stop was on its way) or the end of a
      // group-stop: nothing to report.
      ::ptrace(PTRACE_CONT, tid, nullptr, 0);
      threads_[tid] = ThreadState::Running;
      return std::optional<StopEvent>();
    default:
      break;
  }
  if (ptrace_event != 0) {
    ::ptrace(PTRACE_CONT, tid, nullptr, 0);
    threads_[tid] = ThreadState::Running;
    return std::optional<StopEvent>();
  }
  if (signal == SIGCONT) group_stopped_.clear();
  event.signal = signal;
  if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &event.info) != 0) std::memset(&event.info, 0, sizeof event.info);
  event.kind = StopKind::Signal;
#if defined(__aarch64__)
  // BRK: TRAP_BRKPT, the pc at the BRK itself.
  constexpr int kSoftwareBreakpointCode = TRAP_BRKPT;
  constexpr uint64_t kPcPastBreakpoint = 0;
#else
  // int3: SI_KERNEL, rip one byte past it.
  constexpr int kSoftwareBreakpointCode = SI_KERNEL;
  constexpr uint64_t kPcPastBreakpoint = 1;
#endif
  if (signal == SIGTRAP && event.info.si_code == kSoftwareBreakpointCode) {
    auto registers = get_registers(tid);
    if (registers) {
      event.kind = StopKind::Trap;
      event.address = registers->ip() - kPcPastBreakpoint;
      event.has_registers = true;
      event.registers = *registers;
    }
  }
  return std::optional<StopEvent>(event);
}

Status Process::wait_until_stopped(pid_t tid) {
  for (;;) {
    auto state = threads_.find(tid);
    if (state == threads_.end()) return {};
    if (state->second == ThreadState::Stopped) return {};
    int status = 0;
    if (auto early = take_stashed_status(tid)) {
      status = *early;
    } else {
      pid_t got = ::waitpid(tid, &status, __WALL);
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == ECHILD) {  // gone without a trace (reaped elsewhere)
          threads_.erase(tid);
          if (tid == pid_) alive_ = false;
          return {};
        }
        return make_error(fmt::format("waitpid({}): {}", tid, errno_text()));
      }
    }
    auto event = classify(tid, status);
    if (!event) return event.error();
    if (*event) pending_.push_back(**event);
  }
}

Result<std::optional<StopEvent>> Process::next_event() {
  auto next = next_event(WaitOptions{});
  if (!next) return next.error();
  return std::move(next->event);
}

Result<NextEvent> Process::next_event(const WaitOptions& options) {
  WaitOptions wait = options;
  for (;;) {
    if (!pending_.empty()) {
      StopEvent event = pending_.front();
      pending_.pop_front();
      return NextEvent{event, false};
    }
    if (!alive_) return make_error(fmt::format("process {} is gone", pid_));
    for (auto& [tid, state] : threads_) {
      if (auto early = take_stashed_status(tid)) {
        auto event = classify(tid, *early);
        if (!event) return event.error();
        if (*event) pending_.push_back(**event);
        break;
      }
    }
    if (!pending_.empty()) continue;
    auto waited = wait_any(wait);
    wait.poll_first = true;  // what follows a reaped status is a fresh wait
    if (!waited) return waited.error();
    if (!waited->status) return NextEvent{std::nullopt, waited->idle};
    RawWait raw = *waited->status;
    if (!owns(raw.tid)) {
      stash_status(raw.tid, raw.status);
      StopEvent foreign;
      foreign.kind = StopKind::Foreign;
      foreign.tid = raw.tid;
      return NextEvent{foreign, false};
    }
    auto event = classify(raw.tid, raw.status);
    if (!event) return event.error();
    if (*event) return NextEvent{std::move(*event), false};
  }
}

Status Process::resume(pid_t tid, int signal) {
  auto state = threads_.find(tid);
  if (state == threads_.end()) return make_error(fmt::format("thread {} is not traced", tid));
  if (state->second != ThreadState::Stopped) return {};
  long request = PTRACE_CONT;
  if (signal == 0 && group_stopped_.count(tid)) request = PTRACE_LISTEN;  // stay in the program's group-stop
  long result = ::ptrace(static_cast<__ptrace_request>(request), tid, nullptr, signal);
  if (result != 0 && errno == EIO && request == PTRACE_LISTEN) {
    // A SIGCONT ended the group-stop while the thread sat in a ptrace-stop: LISTEN only
    // works in a group-stop, so the thread simply runs on.
    group_stopped_.erase(tid);
    request = PTRACE_CONT;
    result = ::ptrace(PTRACE_CONT, tid, nullptr, signal);
  }
  if (result != 0 && errno != ESRCH) {
    return make_error(fmt::format("cannot resume thread {}: {}", tid, errno_text()));
  }
  state->second = request == PTRACE_LISTEN ? ThreadState::Listening : ThreadState::Running;
  return {};
}

Status Process::resume_all(pid_t except) {
  std::set<pid_t> with_events;
  for (const StopEvent& event : pending_) with_events.insert(event.tid);
  std::vector<pid_t> to_resume;
  for (const auto& [tid, state] : threads_) {
    if (state == ThreadState::Stopped && !with_events.count(tid) && tid != except) to_resume.push_back(tid);
  }
  for (pid_t tid : to_resume) {
    if (auto resumed = resume(tid); !resumed) return resumed;
  }
  return {};
}

Status Process::stop_all() {
  waiting_for_interrupt_ = true;
  auto finish = [&](Status status) {
    waiting_for_interrupt_ = false;
    return status;
  };
  // A clone event that arrives while we wait adds a thread (Starting): it is waited for in
  // the next round, so that nothing of the program runs when this returns.
  for (;;) {
    std::vector<pid_t> waiting;
    for (const auto& [tid, state] : threads_) {
      if (state == ThreadState::Running || state == ThreadState::Listening) {
        ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
        waiting.push_back(tid);
      } else if (state == ThreadState::Starting && !(tid == pid_ && leader_exiting_)) {
        waiting.push_back(tid);
      }
    }
    if (waiting.empty()) break;
    for (pid_t tid : waiting) {
      if (auto stopped = wait_until_stopped(tid); !stopped) return finish(stopped);
    }
  }
  // An interrupt is reported before a signal already queued: a thread that has just executed
  // an int3 may stop here with its SIGTRAP still pending. Let it take the signal now, so the
  // caller sees the trap instead of the program dying of it after a detach. Its first resume
  // may end in one more interrupt stop instead (a PTRACE_INTERRUPT that reached it while it
  // was already stopped is kept for its next resume): then again.
  for (int round = 0; round < 4; ++round) {
    std::vector<pid_t> trapped;
    for (const auto& [tid, state] : threads_) {
      if (state != ThreadState::Stopped || !sigtrap_pending(tid)) continue;
      // By value: clang before 16 cannot capture a structured binding.
      bool has_event = std::any_of(pending_.begin(), pending_.end(), [id = tid](const StopEvent& e) { return e.tid == id; });
      if (!has_event) trapped.push_back(tid);
    }
    if (trapped.empty()) break;
    for (pid_t tid : trapped) {
      if (::ptrace(PTRACE_CONT, tid, nullptr, 0) != 0) continue;
      threads_[tid] = ThreadState::Running;
      if (auto stopped = wait_until_stopped(tid); !stopped) return finish(stopped);
    }
  }
  return finish({});
}

bool Process::sigtrap_pending(pid_t tid) const {
  // An int3's SIGTRAP is forced (never blocked); a SIGTRAP the program blocks and someone
  // sent it stays pending while it runs: resuming to deliver it would let the thread run on.
  std::ifstream status(fmt::format("/proc/{}/task/{}/status", pid_, tid));
  std::string line;
  constexpr unsigned long long kSigtrap = 1ull << (SIGTRAP - 1);
  bool pending = false, blocked = false;
  while (std::getline(status, line)) {
    if (line.rfind("SigPnd:", 0) == 0) pending = std::strtoull(line.c_str() + 7, nullptr, 16) & kSigtrap;
    if (line.rfind("SigBlk:", 0) == 0) blocked = std::strtoull(line.c_str() + 7, nullptr, 16) & kSigtrap;
  }
  return pending && !blocked;
}

std::deque<StopEvent> Process::take_pending_events() {
  std::deque<StopEvent> events;
  events.swap(pending_);
  return events;
}

Status Process::detach() {
  if (!alive_) return {};
  if (auto stopped = stop_all(); !stopped) return stopped;
  std::map<pid_t, int> deliver;
  for (const StopEvent& event : pending_) {
    if (event.kind == StopKind::Signal || event.kind == StopKind::Trap) deliver[event.tid] = event.signal;
  }
  pending_.clear();
  for (const auto& [tid, state] : threads_) {
    if (state != ThreadState::Stopped) continue;
    ::ptrace(PTRACE_DETACH, tid, nullptr, deliver.count(tid) ? deliver[tid] : 0);
  }
  threads_.clear();
  alive_ = false;
  return {};
}

Status Process::kill() {
  if (!alive_) return {};
  ::kill(pid_, SIGKILL);
  while (alive_) {
    int status = 0;
    pid_t got = ::waitpid(-1, &status, __WALL);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (!owns(got)) {
      stash_status(got, status);
      continue;
    }
    if (WIFSTOPPED(status)) {
      ::ptrace(PTRACE_CONT, got, nullptr, 0);
      continue;
    }
    if (got == pid_) break;
    threads_.erase(got);
  }
  alive_ = false;
  threads_.clear();
  pending_.clear();
  return {};
}

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
// that call: resumed, the kernel first stores the call's return value in rax. Run from there,
// the stub would execute system call number <return value> (the child's tid, 0 after an exec),
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

pid_t Process::any_stopped_thread() const {
  for (const auto& [tid, state] : threads_) {
    if (state == ThreadState::Stopped) return tid;
  }
  return 0;
}

Result<Registers> Process::get_registers(pid_t tid) {
  Registers registers;
#if defined(__aarch64__)
  iovec block{&registers.raw, sizeof registers.raw};
  if (::ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &block) != 0) {
    return make_error(fmt::format("cannot read the registers of thread {}: {}", tid, errno_text()));
  }
  // An AArch32 (compat) thread's NT_PRSTATUS is its 18 32-bit registers.
  if (block.iov_len != sizeof registers.raw) {
    return make_error(fmt::format("thread {} runs AArch32 code (a 32-bit compat process): xprobe traces AArch64 "
                                  "processes only",
                                  tid));
  }
#else
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &registers.raw) != 0) {
    return make_error(fmt::format("cannot read the registers of thread {}: {}", tid, errno_text()));
  }
#endif
  return registers;
}

Status Process::set_registers(pid_t tid, const Registers& registers) {
#if defined(__aarch64__)
  iovec block{const_cast<user_regs_struct*>(&registers.raw), sizeof registers.raw};
  if (::ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &block) != 0) {
#else
  if (::ptrace(PTRACE_SETREGS, tid, nullptr, &registers.raw) != 0) {
#endif
    return make_error(fmt::format("cannot write the registers of thread {}: {}", tid, errno_text()));
  }
  return {};
}

Status Process::read(uint64_t address, std::span<uint8_t> buffer) {
  ReadRequest request{address, buffer, 0};
  if (auto batch = read_batch(std::span<ReadRequest>(&request, 1)); !batch) return batch;
  if (request.copied != buffer.size()) {
    return make_error(fmt::format("cannot read {} bytes at 0x{:x} in process {}", buffer.size(), address, pid_));
  }
  return {};
}

Status Process::read_batch(std::span<ReadRequest> requests) {
  // One iovec per page so that a read running into an unmapped page still returns the part
  // before it (process_vm_readv never splits an iovec).
  struct Piece {
    size_t request;
    iovec local;
    iovec remote;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < requests.size(); ++i) {
    ReadRequest& request = requests[i];
    request.copied = 0;
    uint64_t address = request.address;
    size_t done = 0;
    while (done < request.buffer.size()) {
      uint64_t page_left = kPageSize - (address % kPageSize);
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(page_left, request.buffer.size() - done));
      pieces.push_back({i, {request.buffer.data() + done, chunk}, {reinterpret_cast<void*>(address), chunk}});
      done += chunk;
      address += chunk;
    }
  }
  std::vector<bool> failed(requests.size(), false);
  size_t next = 0;
  while (next < pieces.size()) {
    if (failed[pieces[next].request]) {
      ++next;
      continue;
    }
    size_t count = 0;
    std::vector<iovec> local, remote;
    while (next + count < pieces.size() && count < IOV_MAX && !failed[pieces[next + count].request]) {
      local.push_back(pieces[next + count].local);
      remote.push_back(pieces[next + count].remote);
      ++count;
    }
    ssize_t got = -1;
    if (use_vm_readv_) {
      got = ::process_vm_readv(pid_, local.data(), count, remote.data(), count, 0);
      if (got < 0 && (errno == ENOSYS || errno == EPERM)) use_vm_readv_ = false;
    }
    if (!use_vm_readv_) {
      got = 0;
      for (size_t i = 0; i < count; ++i) {
        ssize_t one = ::pread(mem_fd_, local[i].iov_base, local[i].iov_len,
                              static_cast<off_t>(reinterpret_cast<uint64_t>(remote[i].iov_base)));
        if (one != static_cast<ssize_t>(local[i].iov_len)) break;
        got += one;
      }
    }
    if (got < 0) {
      if (errno == ESRCH) return make_error(fmt::format("process {} is gone", pid_));
      got = 0;  // EFAULT on the first piece
    }
    size_t left = static_cast<size_t>(got);
    size_t i = 0;
    for (; i < count && left >= pieces[next + i].local.iov_len; ++i) {
      requests[pieces[next + i].request].copied += pieces[next + i].local.iov_len;
      left -= pieces[next + i].local.iov_len;
    }
    if (i < count) {
      failed[pieces[next + i].request] = true;  // its first unreadable page ends that request
      ++i;
    }
    next += i;
  }
  return {};
}

Status Process::write(uint64_t address, std::span<const uint8_t> bytes) {
  if (mem_fd_ >= 0) {
    ssize_t written = ::pwrite(mem_fd_, bytes.data(), bytes.size(), static_cast<off_t>(address));
    if (written == static_cast<ssize_t>(bytes.size())) return {};
  }
  return poke_write(address, bytes);
}

Status Process::poke_write(uint64_t address, std::span<const uint8_t> bytes) {
  pid_t tid = any_stopped_thread();
  if (tid == 0) return make_error(fmt::format("cannot write at 0x{:x}: no stopped thread in process {}", address, pid_));
  size_t done = 0;
  while (done < bytes.size()) {
    uint64_t at = address + done;
    uint64_t word_address = at & ~uint64_t{7};
    size_t skip = static_cast<size_t>(at - word_address);
    errno = 0;
    long word = ::ptrace(PTRACE_PEEKDATA, tid, reinterpret_cast<void*>(word_address), nullptr);
    if (errno != 0) return make_error(fmt::format("cannot write at 0x{:x}: {}", at, errno_text()));
    size_t chunk = std::min(bytes.size() - done, 8 - skip);
    std::memcpy(reinterpret_cast<uint8_t*>(&word) + skip, bytes.data() + done, chunk);
    if (::ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(word_address), reinterpret_cast<void*>(word)) != 0) {
      return make_error(fmt::format("cannot write at 0x{:x}: {}", at, errno_text()));
    }
    done += chunk;
  }
  return {};
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
    // The stub goes over the code at the thread's rip: no other thread may run meanwhile.
    if (auto stopped = stop_all(); !stopped) return stopped.error();
  }
  auto saved = get_registers(tid);
  if (!saved) return saved.error();
#if defined(__x86_64__)
  const bool compat = saved->raw.cs == kUser32CodeSegment;
#else
  constexpr bool compat = false;
#endif
  uint64_t call_args[6] = {};
  std::copy(args.begin(), args.end(), call_args);
  if (compat) {
    // The i386 numbers (arch/x86/entry/syscalls/syscall_32.tbl); mmap2 takes its offset in pages.
    constexpr int64_t kI386Munmap = 91, kI386Mmap2 = 192;
    if (number == SYS_mmap) {
      number = kI386Mmap2;
      call_args[5] /= kPageSize;
    } else if (number == SYS_munmap) {
      number = kI386Munmap;
    } else {
      return make_error(fmt::format("remote system call {} has no i386 counterpart here", number));
    }
  }
  uint64_t stub = syscall_stub_ != 0 ? syscall_stub_ : saved->ip();
  uint8_t original[sizeof kSyscallStub];
  if (syscall_stub_ == 0) {
    if (auto read_back = read(stub, original); !read_back) return read_back.error();
    if (auto patched = write(stub, syscall_stub_code(tid)); !patched) return patched.error();
  }
  auto restore_code = [&]() -> Status {
    if (syscall_stub_ == 0) return write(stub, original);
    return {};
  };
  Registers call = *saved;
#if defined(__aarch64__)
  // svc #0: the number in x8, the arguments in x0..x5, the result in x0. No restart logic can
  // apply on resume: the kernel decided any restart before the stop, and the stub's own
  // breakpoint stop is no system call.
  for (size_t i = 0; i < args.size(); ++i) call.raw.regs[i] = call_args[i];
  call.raw.regs[8] = static_cast<uint64_t>(number);
#else
  unsigned long long* argument_registers[] = {&call.raw.rdi, &call.raw.rsi, &call.raw.rdx, &call.raw.r10, &call.raw.r8, &call.raw.r9};
  // i386: int 0x80 takes ebx, ecx, edx, esi, edi, ebp.
  unsigned long long* argument_registers32[] = {&call.raw.rbx, &call.raw.rcx, &call.raw.rdx, &call.raw.rsi, &call.raw.rdi, &call.raw.rbp};
  for (size_t i = 0; i < args.size(); ++i) *(compat ? argument_registers32[i] : argument_registers[i]) = call_args[i];
  call.raw.rax = static_cast<uint64_t>(number);
  call.raw.orig_rax = ~uint64_t{0};  // not in a system call: no restart logic on resume
#endif
  call.set_ip(stub);
  if (auto set = set_registers(tid, call); !set) {
    (void)restore_code();
    return set.error();
  }
  std::vector<int> deferred_signals;
  int result_status = 0;
  for (;;) {
    if (::ptrace(PTRACE_CONT, tid, nullptr, 0) != 0) {
      (void)restore_code();
      (void)set_registers(tid, *saved);
      return make_error(fmt::format("remote system call: cannot run thread {}: {}", tid, errno_text()));
    }
    // Wait for the next stop of this thread; an interrupted wait (SIGINT/SIGTERM reached xprobe)
    // waits again. Only a reaped stop may be resumed: a second PTRACE_CONT here would, if the
    // thread had meanwhile stopped at the stub's int3, run it on past the int3 into the empty
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
      if (now && now->ip() == stub + kSyscallStubStop) break;
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
#if defined(__aarch64__)
  return static_cast<int64_t>(after->raw.regs[0]);
#else
  if (compat) {
    // eax: an address up to 4 GiB, or -errno (-4095..-1).
    const auto eax = static_cast<uint32_t>(after->raw.rax);
    if (eax >= static_cast<uint32_t>(-4095)) return static_cast<int64_t>(static_cast<int32_t>(eax));
    return static_cast<int64_t>(eax);
  }
  return static_cast<int64_t>(after->raw.rax);
#endif
}

bool Process::runs_32bit_code(pid_t tid) {
#if defined(__x86_64__)
  auto registers = get_registers(tid);
  return registers && registers->raw.cs == kUser32CodeSegment;
#else
  (void)tid;
  return false;  // an AArch32 thread's registers cannot even be read (get_registers says why)
#endif
}

std::span<const uint8_t> Process::syscall_stub_code(pid_t tid) {
#if defined(__x86_64__)
  if (runs_32bit_code(tid)) return kCompatSyscallStub;
#else
  (void)tid;
#endif
  return kSyscallStub;
}

Status Process::install_syscall_stub(pid_t tid, uint64_t address) {
  if (auto written = write(address, syscall_stub_code(tid)); !written) return written;
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
  constexpr uint64_t kLowest = 0x10000;
  const uint64_t highest = highest_end != 0 ? std::min<uint64_t>(highest_end, 0x7ffffffff000) : 0x7ffffffff000;
  constexpr uint64_t kGuard = 16 * kPageSize;  // keep clear of neighbours (heap growth, stack guard)
  std::vector<uint64_t> candidates;
  uint64_t previous_end = kLowest;
  auto consider_gap = [&](uint64_t gap_start, uint64_t gap_end) {
    if (gap_end <= gap_start || gap_end - gap_start < size + 2 * kGuard) return;
    uint64_t low = gap_start + kGuard;
    uint64_t high = gap_end - kGuard - size;
    uint64_t pick = near < low ? low : (near > high ? high : near & ~(kPageSize - 1));
    candidates.push_back(pick);
  };
  for (const MapEntry& entry : *layout) {
    if (highest_end != 0 && entry.start >= highest) break;  // nothing above is reachable
    if (entry.start > previous_end) consider_gap(previous_end, entry.start);
    // Growth room after the heap belongs to brk.
    previous_end = std::max(previous_end, entry.path == "[heap]" ? entry.end + (64 << 20) : entry.end);
  }
  consider_gap(previous_end, highest);
  auto distance = [&](uint64_t start) {
    uint64_t far_end = start + size;
    uint64_t a = start > near ? start - near : near - start;
    uint64_t b = far_end > near ? far_end - near : near - far_end;
    return std::max(a, b);
  };
  std::erase_if(candidates, [&](uint64_t start) { return distance(start) > reach; });
  // Prefer below the code: above an executable lies its heap.
  std::sort(candidates.begin(), candidates.end(), [&](uint64_t a, uint64_t b) {
    bool a_below = a < near, b_below = b < near;
    if (a_below != b_below) return a_below;
    return distance(a) < distance(b);
  });
  constexpr uint64_t kMapFixedNoReplace = 0x100000;
  for (uint64_t start : candidates) {
    uint64_t args[] = {start, size, static_cast<uint64_t>(prot), MAP_PRIVATE | MAP_ANONYMOUS | kMapFixedNoReplace,
                       ~uint64_t{0}, 0};
    auto mapped = remote_syscall(tid, SYS_mmap, args);
    if (!mapped) return mapped.error();
    if (*mapped < 0 && *mapped > -4096) continue;
    uint64_t address = static_cast<uint64_t>(*mapped);
    if (address == start) return address;
    (void)remote_munmap(tid, address, size);  // an old kernel ignored MAP_FIXED_NOREPLACE
  }
  return make_error(fmt::format("no free address range of {} bytes within {} bytes of 0x{:x} in process {}", size,
                                reach, near, pid_));
}

}  // namespace xprobe::target
