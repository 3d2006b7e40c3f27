#include "supervisor/all_threads_stopped.h"

namespace xprobe::supervisor {

AllThreadsStopped::AllThreadsStopped(target::Process& process, pid_t keep_stopped)
    : process_(process), keep_stopped_(keep_stopped), stopped_some_(!process.all_stopped()) {
  if (stopped_some_) status_ = process_.stop_all();
}

AllThreadsStopped::~AllThreadsStopped() {
  if (!stopped_some_ || !process_.alive()) return;
  // A thread that cannot be resumed is gone; its end is an event the supervisor sees next.
  if (auto resumed = process_.resume_all(keep_stopped_); !resumed) return;
}

}  // namespace xprobe::supervisor
