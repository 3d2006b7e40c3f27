#pragma once
// The raw wait primitive of the tracer: one waitpid(__WALL) that can be interrupted by a stop
// request (SIGINT/SIGTERM sent to the tracer) without a race.
#include <sys/types.h>

#include <optional>

#include "support/result.h"

namespace xprobe::target {

// While an instance lives, SIGINT and SIGTERM sent to the tracer do not kill it: they set
// stop_requested(), which every wait checks (a blocked waitpid is interrupted; a signal that
// comes just before it blocks interrupts the wake thread, whose stop ends the wait).
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

// The traced thread the stop-signal handler interrupts to end a wait (Process sets it).
void set_wake_thread(pid_t tid);

bool stop_requested();
// The signal that requested the stop (SIGINT or SIGTERM; SIGINT for request_stop()), 0 if none.
int stop_signal();
void request_stop();        // as if SIGINT had arrived (tests, the CLI)
void clear_stop_request();

// Another thread of the tracer has work for the thread that waits (a live session's command):
// the general wait in progress, or the next one, returns as an idle tick (WaitResult::idle) so
// that its loop can take the work. prepare_wake() is called on the waiting thread first.
// A wake that lands just before waitpid() blocks is seen at the wait's next idle tick.
void prepare_wake();
void wake_waiter();

struct RawWait {
  pid_t tid = 0;
  int status = 0;
};

struct WaitOptions {
  // A wait for any child that blocks this long returns with WaitResult::idle set (the jump
  // engine's records are collected so even when no thread stops). 0: wait as long as it takes.
  unsigned idle_after_ms = 0;
  // Poll briefly before sleeping: right after a resume the next stop is usually microseconds
  // away. The caller turns it off for the wait that follows an idle return.
  bool poll_first = true;
};

struct WaitResult {
  std::optional<RawWait> status;  // empty: a stop was requested, or the wait went idle
  bool idle = false;
};

// Waits for any traced child. An error when there is no child left.
Result<WaitResult> wait_any(const WaitOptions& options);
// Waits for any traced child (or `tid` when given). Returns std::nullopt when a stop was
// requested before anything happened, an error when there is no child left.
Result<std::optional<RawWait>> wait_any(std::optional<pid_t> tid = std::nullopt);

}  // namespace xprobe::target
