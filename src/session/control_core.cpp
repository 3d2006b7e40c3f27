#include "session/control_core.h"

#include <cerrno>

#include "target/wait.h"

namespace xprobe::session {

ControlReply ControlCore::call(ControlRequest request) {
  Pending pending{std::move(request), {}, false};
  std::unique_lock lock(mutex_);
  if (shut_down_) return ControlReply{ESHUTDOWN, "the session has ended", {}};
  waiting_.push_back(&pending);
  // The loop may be blocked in waitpid(): it returns for the request as for an idle tick.
  target::wake_waiter();
  done_.wait(lock, [&] { return pending.done; });
  return std::move(pending.reply);
}

size_t ControlCore::serve(LiveSession& session) {
  size_t served = 0;
  for (;;) {
    Pending* next = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (waiting_.empty()) return served;
      next = waiting_.front();
      waiting_.pop_front();
    }
    // Carried out without the lock: a surface may queue the next request meanwhile.
    ControlReply reply = session.execute(next->request);
    {
      std::lock_guard lock(mutex_);
      next->reply = std::move(reply);
      next->done = true;
    }
    done_.notify_all();
    ++served;
  }
}

void ControlCore::shut_down() {
  std::lock_guard lock(mutex_);
  shut_down_ = true;
  for (Pending* pending : waiting_) {
    pending->reply = ControlReply{ESHUTDOWN, "the session has ended", {}};
    pending->done = true;
  }
  waiting_.clear();
  done_.notify_all();
}

}  // namespace xprobe::session
