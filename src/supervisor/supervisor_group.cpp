#include "supervisor/supervisor_group.h"

#include <algorithm>

#include "target/wait.h"

namespace xprobe::supervisor {

unsigned SupervisorGroup::idle_interval() const {
  unsigned interval = 0;
  auto take = [&](unsigned wanted) {
    if (wanted != 0 && (interval == 0 || wanted < interval)) interval = wanted;
  };
  for (const Supervisor* member : members_) take(member->idle_interval());
  for (const Participant* participant : loop_participants_) take(participant->idle_interval_ms());
  return interval;
}

void SupervisorGroup::retire(Supervisor& supervisor, const Result<RunResult>& how, const Ended& ended) {
  std::erase(members_, &supervisor);
  // The stop-signal handler interrupts a thread of a process still traced to end a wait.
  if (!members_.empty()) target::set_wake_thread(members_.front()->process().pid());
  ended(supervisor, how);
}

void SupervisorGroup::run(const Ended& ended) {
  for (size_t i = 0; i < members_.size();) {
    Supervisor& member = *members_[i];
    if (auto started = member.start(); !started) {
      static_cast<void>(member.detach());
      retire(member, started.error(), ended);
      continue;
    }
    ++i;
  }
  bool idled = false;
  while (!members_.empty()) {
    // One alone waits for its own anyway.
    Supervisor* next = members_.front();
    for (size_t i = 0; members_.size() > 1 && i < members_.size(); ++i) {
      if (!members_[i]->has_waiting_status()) continue;
      next = members_[i];
      break;
    }
    target::WaitOptions wait;
    wait.idle_after_ms = idle_interval();
    wait.poll_first = !idled;  // after an idle tick, straight back to sleep
    idled = false;
    auto step = next->step(wait);
    if (!step) {
      // This process cannot be traced on; the others can. Nothing of ours may stay in it.
      static_cast<void>(next->detach());
      retire(*next, step.error(), ended);
      continue;
    }
    switch (step->kind) {
      case Step::Kind::Ended:
        retire(*next, step->end, ended);
        break;
      case Step::Kind::StopRequested:
        while (!members_.empty()) {
          Supervisor& member = *members_.front();
          if (auto undone = member.detach(); !undone) retire(member, undone.error(), ended);
          else retire(member, RunResult{RunEnd::Detached, 0, 0}, ended);
        }
        return;
      case Step::Kind::Idle:
        idled = true;
        for (Supervisor* member : members_) member->idle();
        for (Participant* participant : loop_participants_) participant->on_idle();
        break;
      case Step::Kind::Event:
        break;
    }
    for (Supervisor* member : members_) member->between_events();
    for (Participant* participant : loop_participants_) participant->between_events();
    // A participant that detached its process (between events, or in a callback) ended it.
    for (size_t i = 0; i < members_.size();) {
      if (!members_[i]->detached()) {
        ++i;
        continue;
      }
      retire(*members_[i], RunResult{RunEnd::Detached, 0, 0}, ended);
    }
  }
}

}  // namespace xprobe::supervisor
