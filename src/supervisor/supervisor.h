#pragma once
// The process supervisor: it runs the traced process under ptrace and owns everything about
// its life: the event loop, its threads, the children it forks (cleaned and let go, or
// followed), vfork children that share its memory until they exec, exec, its end, and the
// detach that leaves it running as if never traced. What acts inside the process (the trap
// engine, the jump engine, the session) joins as a Participant (participant.h) and is told what
// happened; none of them runs the loop and none needs to know the others. They coordinate
// through what the supervisor offers: the thread being handled, "all threads stopped" scopes
// (all_threads_stopped.h), and the ledger of patched bytes (patch_ledger.h).
#include <sys/types.h>

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <vector>

#include "insn/arch.h"
#include "supervisor/participant.h"
#include "supervisor/patch_ledger.h"
#include "support/result.h"
#include "target/process.h"

namespace xprobe::supervisor {

struct SupervisorOptions {
  // Trace forked children too: they keep the probes they were forked with and their hits are
  // reported with their own process and tid. Else a child gets every patch removed and is
  // detached at once. A followed child is let go when it execs.
  bool follow_fork = false;
};

enum class RunEnd { Exited, Killed, Detached };

struct RunResult {
  RunEnd end = RunEnd::Exited;
  int exit_status = 0;  // Exited
  int signal = 0;       // Killed
};

// What one turn of the loop brought (Supervisor::step): an event handled, an idle tick, a stop
// requested (SIGINT/SIGTERM: nothing detached yet), or the end of this process's tracing.
struct Step {
  enum class Kind { Event, Idle, StopRequested, Ended };
  Kind kind = Kind::Event;
  RunResult end;  // Ended
};

class Supervisor final : private target::ThreadExitListener {
 public:
  explicit Supervisor(target::Process& process, SupervisorOptions options = {});
  ~Supervisor() override;
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Participants are called in the order they joined. One that goes away before the
  // supervisor leaves first: a detach happens then if tracing still runs (so that nothing of
  // it stays in the process), and it is not called again.
  void join(Participant& participant);
  void leave(Participant& participant);

  // Runs the process until it exits or is killed, or until a stop is requested
  // (target::StopSignals, target::request_stop()) or a participant detaches: then everything
  // is undone and the process runs on untraced (RunEnd::Detached).
  Result<RunResult> run();
  // One turn of run()'s loop, for a loop that drives several supervisors in one tracer thread
  // (supervisor_group.h): the next event of this process or of a child it follows, waited for
  // as `wait` says. The wait is for any traced child: a stop of another supervisor's process
  // is kept for it (has_waiting_status()). The participants' on_idle and between_events are
  // left to the caller.
  Result<Step> step(const target::WaitOptions& wait);
  // Lets the process run (the first step() does it too): every member of a group is started
  // before any waits, since a process that never runs has nothing to wait for.
  Status start();
  // An event can be taken without waiting (step() returns at once).
  bool has_waiting_status() const;
  // The participants' loop callbacks: on_idle() (after an idle tick), between_events(), and
  // the shortest idle interval any of them wants.
  void idle();
  void between_events();
  unsigned idle_interval() const;
  // Stops every thread, has every participant undo what it did, lets every process go.
  // Safe at any time, also from a participant's callback, and more than once.
  Status detach();
  bool detached() const { return detached_; }

  target::Process& process() { return process_; }
  // The architecture of the code the process runs (chosen again at exec: a 64-bit program
  // may exec a 32-bit one).
  insn::Arch arch() const { return arch_; }
  // The thread whose stop is being handled: it stays stopped until its handler is done, also
  // across AllThreadsStopped scopes. 0 outside of an event.
  pid_t handling_tid() const { return handling_tid_; }
  PatchLedger& patches() { return patches_; }

  // The traced process and the forked children it follows: every process whose memory holds
  // the probes (vfork children share the traced process's memory).
  Status for_each_address_space(const std::function<Status(target::Process&)>& action);
  std::vector<target::Process*> followed_children();

 private:
  void thread_exiting(pid_t tid) override;
  void select_arch();
  Result<Step> handle(const target::StopEvent& event);
  Status on_trap(target::Process& space, const target::StopEvent& event, bool report);
  Status deliver_signal(target::Process& space, pid_t tid, int signal);
  // `in_traced_memory`: the parent runs in the traced process's memory (it or a vfork child).
  Status on_fork(const target::StopEvent& event, bool in_traced_memory = false);
  // A vfork child is gone from the traced process's memory (participant::on_vfork_child).
  void vfork_child_left(pid_t pid);
  void on_exec();
  void thread_exited(pid_t tid);
  Status on_foreign(pid_t tid);
  Status on_vfork_child_event(pid_t tid);
  Status on_followed_event(pid_t tid);
  Status detach_one(target::Process& space);

  target::Process& process_;
  SupervisorOptions options_;
  insn::Arch arch_ = insn::Arch::X86_64;
  std::vector<Participant*> participants_;
  std::map<pid_t, std::unique_ptr<target::Process>> vfork_children_;
  std::set<pid_t> vfork_in_traced_memory_;  // those of vfork_children_ that share process_'s memory
  std::map<pid_t, std::unique_ptr<target::Process>> followed_;  // by pid
  PatchLedger patches_;
  pid_t handling_tid_ = 0;
  bool started_ = false;
  bool detached_ = false;
};

}  // namespace xprobe::supervisor
