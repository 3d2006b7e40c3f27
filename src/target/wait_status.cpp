#include "target/process.h"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cstring>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "arch/register_block.h"
#include "target/process_internal.h"

namespace xprobe::target {

using namespace detail;

// Turning a wait status into an event: the ptrace stop protocol, and the statuses of tids no
// Process knows yet.
namespace {

std::map<pid_t, std::deque<int>>& stash() {
  static std::map<pid_t, std::deque<int>> statuses;
  return statuses;
}

}  // namespace

std::optional<int> take_stashed_status(pid_t tid) {
  auto it = stash().find(tid);
  if (it == stash().end() || it->second.empty()) return std::nullopt;
  int status = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) stash().erase(it);
  return status;
}

void stash_status(pid_t tid, int status) { stash()[tid].push_back(status); }

bool has_stashed_status(pid_t tid) { return stash().count(tid) != 0; }

bool Process::has_waiting_status() const {
  if (!pending_.empty()) return true;
  if (stash().empty()) return false;  // the usual case: asked on every event, without a lookup per thread
  for (const auto& [tid, state] : threads_)
    if (has_stashed_status(tid)) return true;
  return false;
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
  if (signal == arch::kBreakpointSignal && event.info.si_code == arch::kBreakpointSiCode) {
    auto registers = get_registers(tid);
    if (registers) {
      event.kind = StopKind::Trap;
      event.address = registers->ip();  // a breakpoint stop leaves the instruction pointer on it
      event.has_registers = true;
      event.registers = *registers;
    }
  }
  return std::optional<StopEvent>(event);
}

}  // namespace xprobe::target
