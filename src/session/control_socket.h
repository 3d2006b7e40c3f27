#pragma once
// A live session's Unix-domain control socket (control_protocol.h): mode 0600 in the user's
// control directory, named by the session. Every connection is served by a thread of its
// own, which hands each request to the control core and writes the reply; `trace-pipe`
// streams the event buffer. Those threads block every signal (the tracer's thread takes
// SIGINT, SIGTERM and its wait's SIGALRM). Destroying it ends every connection, joins the
// threads and removes the socket.
#include <sys/types.h>

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "session/control_core.h"
#include "session/event_buffer.h"
#include "support/result.h"

namespace xprobe::session {

class ControlSocket {
 public:
  static Result<std::unique_ptr<ControlSocket>> open(ControlCore& core, EventBuffer& events);
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  const std::string& path() const { return path_; }

 private:
  ControlSocket(ControlCore& core, EventBuffer& events, std::string path, int listen_fd, int stop_read, int stop_write);
  void accept_loop();
  void serve(int fd);
  // Waits until `fd` is readable; false when the socket is shutting down (or the peer hung up
  // and `hang_up_ends` is set).
  bool wait_readable(int fd);

  ControlCore& core_;
  EventBuffer& events_;
  std::string path_;
  int listen_fd_;
  int stop_read_, stop_write_;  // a pipe: written once, to wake every thread that polls
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::list<std::thread> connections_;
  std::thread acceptor_;
};

}  // namespace xprobe::session
