#pragma once
// The events of a live session in memory, for the control surfaces: what tracefs's `trace`
// shows (read without consuming) and `trace_pipe` streams (consuming: an event read there is
// gone, from `trace` too, and each goes to one reader when several read). Bounded, with the
// kernel's overwrite semantics: when a new event does not fit, the oldest go, and are counted
// as overwritten. The tracer's thread pushes; readers are other threads.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace xprobe::session {

class EventBuffer {
 public:
  explicit EventBuffer(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Ignored while recording is off (tracefs's tracing_on = 0).
  void push(std::string_view line);
  // Everything held, oldest first.
  std::string snapshot() const;
  struct Snapshot {
    std::string text;
    uint64_t entries = 0;  // events held
    // As the kernel's entries-written: those held and those overwritten, since the buffer was
    // last cleared (consumed events count in neither).
    uint64_t written = 0;
  };
  Snapshot snapshot_with_counts() const;
  void set_recording(bool on);
  bool recording() const;
  void clear();
  // Consumes whatever is held, waiting until something is: empty once the buffer is closed or
  // when `give_up()` (asked every `poll_ms`) says the reader went away.
  std::string take(const std::function<bool()>& give_up, unsigned poll_ms = 100);
  // No more events: waiting readers return.
  void close();

  bool empty() const;
  size_t capacity() const;
  // A smaller capacity drops the oldest events now (counted as overwritten).
  void set_capacity(size_t bytes);
  // Every event overwritten since the start (a clear does not forget them).
  uint64_t overwritten() const;

 private:
  void fit(size_t incoming);  // with the lock held
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::string> lines_;
  size_t bytes_ = 0;
  size_t capacity_;
  uint64_t overwritten_ = 0;
  uint64_t overrun_ = 0;  // overwritten since the last clear
  bool recording_ = true;
  bool closed_ = false;
};

}  // namespace xprobe::session
