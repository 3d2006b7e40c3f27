#pragma once
// What the supervisor asks of the components that act in the traced process: the trap
// engine, the jump engine and the session. Each overrides what concerns it; the supervisor
// calls every participant in the order they joined (Supervisor::join), so that the engines see
// an exec before the session plants its probes again.
//
// Every call happens on the supervisor's thread with the thread concerned stopped. "space" is
// the process whose thread stopped: the traced process, a forked child the supervisor follows
// or a vfork child that shares the traced process's memory until it execs.
#include <sys/types.h>

#include <cstdint>

#include "support/result.h"
#include "target/process.h"

namespace xprobe::supervisor {

struct TrapStop {
  target::Process& space;
  const target::StopEvent& event;  // StopKind::Trap; event.address is the breakpoint's
  // False for a vfork child: it runs the traced process's code with its breakpoints, but its
  // hits are stepped over without callbacks.
  bool report = true;
};

enum class TrapDisposition {
  NotMine,  // not a breakpoint of this participant: the next one is asked
  Handled,  // handled, and the thread resumed (or left for a detach to fix)
};

class Participant {
 public:
  virtual ~Participant() = default;

  // A thread stopped on a breakpoint. If no participant claims it, it is the program's own and
  // the thread resumes with the stop's signal.
  virtual Result<TrapDisposition> on_trap(const TrapStop& /*stop*/) { return TrapDisposition::NotMine; }
  // A signal is about to reach thread `tid`. True: it was the participant's own (sent to ask
  // the tracer for something, and now dealt with): it is not delivered.
  virtual bool on_own_signal(target::Process& /*space*/, pid_t /*tid*/, int /*signal*/) { return false; }
  // The signal will be delivered: a handler must find the thread at an address of the program.
  virtual Status before_signal(target::Process& /*space*/, pid_t /*tid*/) { return {}; }

  // A thread is on its way out (PTRACE_EVENT_EXIT): its memory is still there.
  virtual void on_thread_exiting(pid_t /*tid*/) {}
  // A thread is gone (not the last one: that is the process's end).
  virtual void on_thread_exited(pid_t /*tid*/) {}

  // A forked child the supervisor does not follow carries a copy of everything in the traced
  // process's memory: put the program's bytes back (every thread of `child` stopped). Then
  // release_threads(child), then it is detached.
  virtual void clean_forked_child(target::Process& /*child*/) {}
  // A vfork child starts (`running`, before it runs) or stops (exec, exit, detach) running in
  // the traced process's memory, with the thread pointer of the thread that called vfork.
  virtual void on_vfork_child(bool /*running*/) {}
  // The traced process exec'ed: nothing of the old image is left. Also while detaching.
  virtual void on_exec() {}

  // How long the supervisor may wait without an event before calling on_idle(); 0: never.
  virtual unsigned idle_interval_ms() const { return 0; }
  virtual void on_idle() {}
  // The loop is between two events (after every handled event and every idle tick): no thread
  // is being handled, any may be running. Work that came from outside the loop (a live
  // session's commands) is done here, on the tracer's thread.
  virtual void between_events() {}

  // Detaching, in this order for every participant: prepare_detach(space) for each process
  // (all its threads stopped; pending events not handled yet follow through undo_trap),
  // remove_patches() once, release_threads(space) for each process before it is let go.
  virtual void prepare_detach(target::Process& /*space*/) {}
  // A breakpoint stop that had not been handled when the detach began: true if it was this
  // participant's (the thread is then set back to run the original instruction).
  virtual bool undo_trap(target::Process& /*space*/, const target::StopEvent& /*event*/) { return false; }
  // Every byte this participant changed in the traced process (and the processes it follows)
  // is put back.
  virtual Status remove_patches() { return {}; }
  // No thread of `space` may be left at an address only this participant knows (a slot).
  virtual Status release_threads(target::Process& /*space*/) { return {}; }
};

}  // namespace xprobe::supervisor
