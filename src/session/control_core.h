#pragma once
// The one control core of a live session: every surface (the control socket, the tracefs-like
// mount) turns what its user wrote into a ControlRequest and calls ControlCore::call() from
// its own thread; the request is carried out on the tracer's thread (where every ptrace call
// must come from), between two events of the supervisor's loop, and the caller gets the reply
// when it is done. The operations themselves are the session's (LiveSession); the core only
// hands requests over and wakes the loop, so no surface holds logic of its own.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace xprobe::session {

struct ControlRequest {
  enum class Verb {
    Add,      // `text`: one line as written to uprobe_events (a definition, or "-:[GRP/]EVENT")
    Clear,    // every event removed (`> uprobe_events`)
    Enable,   // `text`: "GRP/EVENT", "GRP/", "EVENT", or "" for every event
    Disable,  // as Enable
    List,     // the live definitions, as the kernel lists uprobe_events
    Stats,    // hits and misses per probe point, as uprobe_profile
    Events,   // "GRP/EVENT enabled" per event, one a line (a mount builds its tree from it)
    Info,     // what the session traces: "pid PID\ncommand ARGV0\n"
    Format,     // `text`: "GRP/EVENT": the kernel's format description of its fields
    Filter,     // `text`: "GRP/EVENT": its filter as the filter file shows it ("none")
    SetFilter,  // `text`: "GRP/EVENT EXPR" ("0" clears), refused with the kernel's message
    Trigger,    // `text`: "GRP/EVENT": its hist triggers as the trigger file shows them
    SetTrigger, // `text`: "GRP/EVENT [!]hist:..." (a new trigger, a command to one, or its removal)
    Hist,       // `text`: "GRP/EVENT": its hist file (every hist trigger's table)
    Drain,      // what the jump-optimized probes recorded so far becomes events now
  };
  Verb verb = Verb::List;
  std::string text;
};

struct ControlReply {
  int error = 0;     // 0, or the errno the kernel's tracefs gives for the same refusal
  std::string text;  // the listing, or the error's message (the kernel's, with its caret)
  // A refused definition's error_log entry, exactly as the kernel's shows it (empty if none).
  std::string error_log;
};

// What the session does for each request, on the tracer's thread.
class LiveSession {
 public:
  virtual ~LiveSession() = default;
  virtual ControlReply execute(const ControlRequest& request) = 0;
};

class ControlCore {
 public:
  // Any thread but the tracer's. Blocks until the request was carried out, or returns
  // ESHUTDOWN once the session is over (also for a request waiting when it ended).
  ControlReply call(ControlRequest request);

  // The tracer's thread: carries out every request waiting. Returns how many there were.
  size_t serve(LiveSession& session);
  // The tracer's thread, when tracing ends: every waiting and later call gets ESHUTDOWN.
  void shut_down();

 private:
  struct Pending {
    ControlRequest request;
    ControlReply reply;
    bool done = false;
  };
  std::mutex mutex_;
  std::condition_variable done_;
  std::deque<Pending*> waiting_;
  bool shut_down_ = false;
};

}  // namespace xprobe::session
