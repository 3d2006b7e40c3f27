#pragma once
// Several traced processes in one tracer thread (xprobe trace -p A -p B ...): one loop over
// their supervisors. ptrace ties every tracee to the thread that attached it, so the
// processes cannot each have a thread of their own; instead each turn lets the supervisor
// whose process has a status waiting take it, or else lets any of them wait for any traced
// child (a stop of another process is kept for its owner, target::stash_status). A process
// whose tracing ends leaves the group while the others go on.
#include <functional>
#include <vector>

#include "supervisor/participant.h"
#include "supervisor/supervisor.h"
#include "support/result.h"

namespace xprobe::supervisor {

class SupervisorGroup {
 public:
  void add(Supervisor& supervisor) { members_.push_back(&supervisor); }
  // Called once a turn for the whole group (not once per process): on_idle, between_events
  // and idle_interval_ms only.
  void join_loop(Participant& participant) { loop_participants_.push_back(&participant); }

  // Told when one process's tracing is over: how it ended, or the error that ended it (the
  // supervisor has detached then). The supervisor has left the group.
  using Ended = std::function<void(Supervisor&, const Result<RunResult>&)>;
  // Runs until every process's tracing is over. A stop request (SIGINT, SIGTERM) detaches
  // from every one, each told as RunEnd::Detached.
  void run(const Ended& ended);

 private:
  unsigned idle_interval() const;
  void retire(Supervisor& supervisor, const Result<RunResult>& how, const Ended& ended);

  std::vector<Supervisor*> members_;
  std::vector<Participant*> loop_participants_;
};

}  // namespace xprobe::supervisor
