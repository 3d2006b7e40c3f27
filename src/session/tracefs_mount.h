#pragma once
// The kernel's tracefs interface for a live session, mounted with FUSE (libfuse3) at
// `--control DIR`: the same files with the same semantics, so that what a user or a script
// does with echo and cat in /sys/kernel/tracing works unchanged there:
//   uprobe_events   append a definition or "-:[GRP/]EVENT"; `>` (truncation) removes them
//                   all; reading lists them. A bad line fails the write (EINVAL, EEXIST,
//                   ENOENT, EBUSY as the kernel's) and error_log gets the kernel's entry.
//   error_log       the refusals, message and caret; truncating it empties it
//   events/enable, events/GRP/enable, events/GRP/EVENT/enable   0, 1 (X when mixed)
//   events/GRP/EVENT/format, events/GRP/EVENT/filter
//   trace           what the event buffer holds, with the kernel's header; `echo > trace` clears
//   trace_pipe      consuming, blocks until events come; several readers share the events
//   uprobe_profile, tracing_on, buffer_size_kb
// Everything goes through the control core (control_core.h), as the control socket's
// requests do. The mount is served by libfuse's threads (every signal blocked); destroying
// it ends blocked readers, unmounts (lazily, if something still uses it) and joins them. It
// is mounted with auto_unmount, so fusermount3 takes it away also when xprobe is killed.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "session/control_core.h"
#include "session/event_buffer.h"
#include "support/result.h"

struct fuse;

namespace xprobe::session {

class TracefsMount {
 public:
  // `irq_info`, `cpus`: for the trace file's header.
  static Result<std::unique_ptr<TracefsMount>> mount(const std::string& directory, ControlCore& core, EventBuffer& events,
                                                     bool irq_info, unsigned cpus);
  ~TracefsMount();
  TracefsMount(const TracefsMount&) = delete;
  TracefsMount& operator=(const TracefsMount&) = delete;

  // For the FUSE callbacks (tracefs_mount.cpp).
  struct Internals;

 private:
  TracefsMount() = default;
  std::unique_ptr<Internals> internals_;
  struct fuse* fuse_ = nullptr;
  std::thread loop_;
};

}  // namespace xprobe::session
