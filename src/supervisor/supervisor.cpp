#include "supervisor/supervisor.h"

#include <signal.h>

#include <algorithm>
#include <deque>

#include "arch/registry.h"
#include "target/wait.h"

namespace xprobe::supervisor {

using target::Process;
using target::StopEvent;
using target::StopKind;

Supervisor::Supervisor(Process& process, SupervisorOptions options) : process_(process), options_(options) {
  process_.set_exit_listener(this);
  select_arch();
}

Supervisor::~Supervisor() {
  // Whatever still runs in the process must not be left half-patched. Errors have nobody to
  // go to here; the participants' own destructors already detached when they left.
  if (!detached_ && !participants_.empty()) static_cast<void>(detach());
  process_.set_exit_listener(nullptr);
}

void Supervisor::join(Participant& participant) { participants_.push_back(&participant); }

void Supervisor::leave(Participant& participant) {
  if (std::find(participants_.begin(), participants_.end(), &participant) == participants_.end()) return;
  // Its patches go while it can still remove them (and everyone else's with them: a
  // half-traced process helps nobody). A detach error has no caller to report to here.
  if (!detached_) static_cast<void>(detach());
  std::erase(participants_, &participant);
}

void Supervisor::select_arch() {
  if (pid_t tid = process_.any_stopped_thread(); tid != 0) {
    if (auto registers = process_.get_registers(tid)) arch_ = arch::thread_arch(registers->raw);
  }
}

unsigned Supervisor::idle_interval() const {
  unsigned interval = 0;
  for (const Participant* participant : participants_) {
    const unsigned wanted = participant->idle_interval_ms();
    if (wanted != 0 && (interval == 0 || wanted < interval)) interval = wanted;
  }
  return interval;
}

Status Supervisor::for_each_address_space(const std::function<Status(Process&)>& action) {
  if (process_.alive()) {
    if (auto done = action(process_); !done) return done;
  }
  for (auto& [pid, child] : followed_) {
    if (!child->alive()) continue;
    if (auto done = action(*child); !done) return done;
  }
  return {};
}

std::vector<Process*> Supervisor::followed_children() {
  std::vector<Process*> children;
  for (auto& [pid, child] : followed_)
    if (child->alive()) children.push_back(child.get());
  return children;
}

void Supervisor::thread_exiting(pid_t tid) {
  for (Participant* participant : participants_) participant->on_thread_exiting(tid);
}

void Supervisor::thread_exited(pid_t tid) {
  for (Participant* participant : participants_) participant->on_thread_exited(tid);
}

Status Supervisor::on_trap(Process& space, const StopEvent& event, bool report) {
  const TrapStop stop{space, event, report};
  for (Participant* participant : participants_) {
    auto disposition = participant->on_trap(stop);
    if (!disposition) return disposition.error();
    if (*disposition == TrapDisposition::Handled) return {};
  }
  return space.resume(event.tid, event.signal);  // the program's own breakpoint, or its own fault
}

Status Supervisor::deliver_signal(Process& space, pid_t tid, int signal) {
  for (Participant* participant : participants_)
    if (participant->on_own_signal(space, tid, signal)) return space.resume(tid);
  for (Participant* participant : participants_)
    if (auto ready = participant->before_signal(space, tid); !ready) return ready;
  return space.resume(tid, signal);
}

Status Supervisor::on_fork(const StopEvent& event, bool in_traced_memory) {
  auto child = Process::adopt_child(event.new_pid);
  if (!child) return {};  // it died already
  if (event.kind == StopKind::Vfork) {
    // It shares our memory (and breakpoints) until it execs or exits: keep handling its hits.
    if (in_traced_memory) {
      vfork_in_traced_memory_.insert(event.new_pid);
      for (Participant* participant : participants_) participant->on_vfork_child(true);
    }
    Process& adopted = *(vfork_children_[event.new_pid] = std::move(*child));
    return adopted.resume_all();
  }
  if (options_.follow_fork && event.kind == StopKind::Fork) {
    // Its memory is a copy of ours: same breakpoints, same slots. Trace it as it is.
    Process& adopted = *(followed_[event.new_pid] = std::move(*child));
    return adopted.resume_all();
  }
  // A forked child carries a copy of every patch: the original bytes go back, and no thread
  // may stay where only a participant knows the way on. What fails here fails in a process
  // we let go; the detach below is what matters.
  for (Participant* participant : participants_) participant->clean_forked_child(**child);
  for (Participant* participant : participants_) static_cast<void>(participant->release_threads(**child));
  return (*child)->detach();
}

void Supervisor::vfork_child_left(pid_t pid) {
  if (vfork_in_traced_memory_.erase(pid) == 0) return;
  for (Participant* participant : participants_) participant->on_vfork_child(false);
}

void Supervisor::on_exec() {
  // The old image, everything patched into it and the memory mapped for it are gone.
  patches_.clear();
  select_arch();
  for (Participant* participant : participants_) participant->on_exec();
}

Status Supervisor::on_foreign(pid_t tid) {
  if (auto handled = on_vfork_child_event(tid); !handled) return handled;
  return on_followed_event(tid);
}

Status Supervisor::on_vfork_child_event(pid_t tid) {
  auto it = vfork_children_.find(tid);
  if (it == vfork_children_.end()) return {};
  Process& child = *it->second;
  auto next = child.next_event();
  if (!next || !*next) return {};
  const StopEvent& event = **next;
  switch (event.kind) {
    case StopKind::Trap:
      return on_trap(child, event, false);
    case StopKind::Exec:
      // A new image without breakpoints. A child that cannot be detached is gone. What its
      // thread left in the shared memory (frames of calls it never returned from, in the
      // agent's tables) is a thread's that exited.
      static_cast<void>(child.detach());
      vfork_children_.erase(it);
      thread_exiting(event.tid);
      thread_exited(event.tid);
      vfork_child_left(tid);
      return {};
    case StopKind::Exited:
    case StopKind::Killed:
      vfork_children_.erase(it);
      thread_exiting(event.tid);
      thread_exited(event.tid);
      vfork_child_left(tid);
      return {};
    case StopKind::Signal:
      return deliver_signal(child, event.tid, event.signal);
    case StopKind::Fork:
    case StopKind::Vfork:
      // A grandchild that cannot be adopted is gone; the child goes on either way.
      static_cast<void>(on_fork(event, vfork_in_traced_memory_.count(tid) != 0));
      return child.resume(event.tid);
    case StopKind::ThreadExited:
    case StopKind::Foreign:
      return {};
    case StopKind::NewThread:
      break;
  }
  return child.resume(event.tid);
}

Status Supervisor::on_followed_event(pid_t tid) {
  auto owner = std::find_if(followed_.begin(), followed_.end(), [&](const auto& entry) { return entry.second->owns(tid); });
  if (owner == followed_.end()) return {};
  Process& child = *owner->second;
  auto next = child.next_event();
  if (!next || !*next) return {};
  const StopEvent& event = **next;
  switch (event.kind) {
    case StopKind::Trap:
      return on_trap(child, event, true);
    case StopKind::Signal:
      return deliver_signal(child, event.tid, event.signal);
    case StopKind::Fork:
    case StopKind::Vfork:
      static_cast<void>(on_fork(event));  // as for a vfork child
      return child.resume(event.tid);
    case StopKind::Exec:
      static_cast<void>(child.detach());  // as for a vfork child
      followed_.erase(owner);
      return {};
    case StopKind::Exited:
    case StopKind::Killed:
      followed_.erase(owner);
      return {};
    case StopKind::ThreadExited:
      thread_exited(event.tid);
      return {};
    case StopKind::Foreign:
      return {};
    case StopKind::NewThread:
      break;
  }
  return child.resume(event.tid);
}

Result<RunResult> Supervisor::run() {
  bool idled = false;
  for (;;) {
    target::WaitOptions wait;
    wait.idle_after_ms = idle_interval();
    wait.poll_first = !idled;  // after an idle tick, straight back to sleep
    auto step = this->step(wait);
    if (!step) return step.error();
    idled = step->kind == Step::Kind::Idle;
    switch (step->kind) {
      case Step::Kind::Ended: return step->end;
      case Step::Kind::StopRequested:
        if (auto undone = detach(); !undone) return undone.error();
        return RunResult{RunEnd::Detached, 0, 0};
      case Step::Kind::Idle: idle(); break;
      case Step::Kind::Event: break;
    }
    between_events();
    if (detached_) return RunResult{RunEnd::Detached, 0, 0};
  }
}

bool Supervisor::has_waiting_status() const {
  if (process_.has_waiting_status()) return true;
  for (const auto& [pid, child] : vfork_children_)
    if (child->has_waiting_status()) return true;
  for (const auto& [pid, child] : followed_)
    if (child->has_waiting_status()) return true;
  return false;
}

void Supervisor::idle() {
  for (Participant* participant : participants_) participant->on_idle();
}

void Supervisor::between_events() {
  if (detached_) return;
  for (Participant* participant : participants_) participant->between_events();
}

Status Supervisor::start() {
  if (started_) return {};
  started_ = true;
  return process_.resume_all();
}

Result<Step> Supervisor::step(const target::WaitOptions& wait) {
  if (auto started = start(); !started) return started.error();
  if (detached_) return Step{Step::Kind::Ended, RunResult{RunEnd::Detached, 0, 0}};
  // A child's status kept by another wait is taken first: the process's own wait would not see it.
  if ((!vfork_children_.empty() || !followed_.empty()) && !process_.has_waiting_status()) {
    for (const auto& [pid, child] : vfork_children_) {
      StopEvent foreign;
      foreign.kind = StopKind::Foreign;
      foreign.tid = pid;
      if (child->has_waiting_status()) return handle(foreign);
    }
    for (const auto& [pid, child] : followed_) {
      if (!child->has_waiting_status() || child->threads().empty()) continue;
      StopEvent foreign;
      foreign.kind = StopKind::Foreign;
      foreign.tid = child->threads().begin()->first;
      return handle(foreign);
    }
  }
  auto next = process_.next_event(wait);
  if (!next) return next.error();
  if (next->idle) return Step{Step::Kind::Idle, {}};
  if (!next->event) return Step{Step::Kind::StopRequested, {}};
  return handle(*next->event);
}

Result<Step> Supervisor::handle(const StopEvent& event) {
  handling_tid_ = event.tid;
  struct Handled {
    pid_t& tid;
    ~Handled() { tid = 0; }
  } handled_scope{handling_tid_};
  Status handled;
  switch (event.kind) {
    case StopKind::Trap:
      handled = on_trap(process_, event, true);
      break;
    case StopKind::Signal:
      handled = deliver_signal(process_, event.tid, event.signal);
      break;
    case StopKind::NewThread:
      handled = process_.resume(event.tid);
      break;
    case StopKind::Fork:
    case StopKind::Vfork:
      handled = on_fork(event, true);
      if (handled) handled = process_.resume(event.tid);
      break;
    case StopKind::Exec:
      on_exec();
      handled = process_.resume(event.tid);
      break;
    case StopKind::ThreadExited:
      thread_exited(event.tid);
      break;
    case StopKind::Exited:
    case StopKind::Killed:
      // Children we still trace outlive the program: leave them clean and untraced (else
      // PTRACE_O_EXITKILL would take them down with xprobe). The program's end is the
      // result; a child that could not be let go cleanly does not change it.
      static_cast<void>(detach());
      if (event.kind == StopKind::Exited) return Step{Step::Kind::Ended, RunResult{RunEnd::Exited, event.exit_status, 0}};
      return Step{Step::Kind::Ended, RunResult{RunEnd::Killed, 0, event.signal}};
    case StopKind::Foreign:
      handled = on_foreign(event.tid);
      break;
  }
  if (!handled) {
    // Killed from outside while we handled its stop: not an error of ours; its end comes next.
    if (target::process_is_ending(process_.pid())) return Step{Step::Kind::Event, {}};
    return handled.error();
  }
  if (detached_) return Step{Step::Kind::Ended, RunResult{RunEnd::Detached, 0, 0}};  // a participant detached
  return Step{Step::Kind::Event, {}};
}

Status Supervisor::detach_one(Process& space) {
  if (auto stopped = space.stop_all(); !stopped) return stopped;
  for (Participant* participant : participants_) participant->prepare_detach(space);
  std::deque<StopEvent> events = space.take_pending_events();
  for (const StopEvent& event : events) {
    switch (event.kind) {
      case StopKind::Trap: {
        // A hit not handled yet: its participant undoes the trap, the original instruction will
        // run. The program's own breakpoint trap is delivered by the detach.
        const bool undone = std::any_of(participants_.begin(), participants_.end(),
                                        [&](Participant* participant) { return participant->undo_trap(space, event); });
        if (!undone) space.push_pending_event(event);
        break;
      }
      case StopKind::Signal:
        space.push_pending_event(event);  // delivered by the detach
        break;
      case StopKind::Fork:
      case StopKind::Vfork: {
        StopEvent as_fork = event;
        as_fork.kind = StopKind::Fork;  // never followed while detaching
        static_cast<void>(on_fork(as_fork));  // a child that vanished needs nothing
        break;
      }
      case StopKind::Exec:
        if (&space == &process_) on_exec();  // nothing of ours in the new image
        break;
      default:
        break;
    }
  }
  return {};
}

Status Supervisor::detach() {
  if (detached_) return {};
  detached_ = true;
  options_.follow_fork = false;  // a fork seen while detaching is cleaned, not followed
  // Everything stops before any byte is restored, so no thread runs half-restored code.
  if (process_.alive()) {
    if (auto stopped = detach_one(process_); !stopped) return stopped;
  }
  // A followed child that cannot be stopped is gone or going: the others still need the rest.
  for (auto& [pid, child] : followed_) static_cast<void>(detach_one(*child));
  // Patches go in the reverse order of joining (the jump engine's before the breakpoints
  // that may watch its return sites). One participant's failure must not keep the others'
  // patches in; the detach below is the last word.
  for (auto it = participants_.rbegin(); it != participants_.rend(); ++it) static_cast<void>((*it)->remove_patches());
  // Children let go here are being let go anyway: whatever fails concerns only them.
  for (auto& [pid, child] : vfork_children_) {
    static_cast<void>(child->stop_all());
    for (Participant* participant : participants_) static_cast<void>(participant->release_threads(*child));
    static_cast<void>(child->detach());
  }
  vfork_children_.clear();
  while (!vfork_in_traced_memory_.empty()) vfork_child_left(*vfork_in_traced_memory_.begin());
  for (auto& [pid, child] : followed_) {
    for (Participant* participant : participants_) static_cast<void>(participant->release_threads(*child));
    static_cast<void>(child->detach());
  }
  followed_.clear();
  if (!process_.alive()) return {};
  for (Participant* participant : participants_)
    if (auto released = participant->release_threads(process_); !released) return released;
  return process_.detach();
}

}  // namespace xprobe::supervisor
