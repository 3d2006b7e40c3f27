#include "session/control_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "session/control_protocol.h"

namespace xprobe::session {
namespace {

// Threads made here start with every signal blocked (they inherit the creator's mask).
template <typename Function>
std::thread thread_without_signals(Function function) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::thread thread(std::move(function));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

constexpr size_t kLongestRequest = 64 * 1024;

}  // namespace

Result<std::unique_ptr<ControlSocket>> ControlSocket::open(ControlCore& core, EventBuffer& events) {
  auto directory = control_directory(true);
  if (!directory) return directory.error();
  const std::string path = session_socket_path(*directory, ::getpid());
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return make_error(fmt::format("{}: the path is too long for a socket", path));
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  ::unlink(path.c_str());  // a session of an earlier xprobe with our pid is long gone
  // Created 0600: nobody else may connect, not even between bind() and chmod().
  const mode_t previous_mask = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int bind_error = errno;
  ::umask(previous_mask);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    const int error = bound != 0 ? bind_error : errno;
    ::close(fd);
    return make_error(fmt::format("cannot listen on {}: {}", path, std::strerror(error)));
  }
  int stop[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return make_error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  return std::unique_ptr<ControlSocket>(new ControlSocket(core, events, path, fd, stop[0], stop[1]));
}

ControlSocket::ControlSocket(ControlCore& core, EventBuffer& events, std::string path, int listen_fd, int stop_read,
                             int stop_write)
    : core_(core), events_(events), path_(std::move(path)), listen_fd_(listen_fd), stop_read_(stop_read),
      stop_write_(stop_write) {
  acceptor_ = thread_without_signals([this] { accept_loop(); });
}

ControlSocket::~ControlSocket() {
  stopping_ = true;
  const char byte = 0;
  (void)!::write(stop_write_, &byte, 1);
  acceptor_.join();
  std::list<std::thread> connections;
  {
    std::lock_guard lock(mutex_);
    connections.swap(connections_);
  }
  for (std::thread& connection : connections) connection.join();
  ::unlink(path_.c_str());
  ::close(listen_fd_);
  ::close(stop_read_);
  ::close(stop_write_);
}

bool ControlSocket::wait_readable(int fd) {
  for (;;) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || stopping_ || (fds[1].revents & POLLIN) != 0) return false;
    if (fds[0].revents != 0) return true;
  }
}

void ControlSocket::accept_loop() {
  while (wait_readable(listen_fd_)) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    connections_.push_back(thread_without_signals([this, fd] {
      serve(fd);
      ::close(fd);
    }));
  }
}

void ControlSocket::serve(int fd) {
  std::string pending;
  char chunk[4096];
  for (;;) {
    size_t newline = pending.find('\n');
    while (newline == std::string::npos) {
      if (pending.size() > kLongestRequest) {
        (void)send_all(fd, encode_reply(ControlReply{E2BIG, "a request line longer than 64 KiB", {}}));
        return;
      }
      if (!wait_readable(fd)) return;
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the client is gone
      pending.append(chunk, static_cast<size_t>(n));
      newline = pending.find('\n');
    }
    const std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    bool stream = false;
    auto request = parse_request_line(line, &stream);
    if (!request) {
      if (!send_all(fd, encode_reply(ControlReply{EINVAL, request.error().message + "\n", {}}))) return;
      continue;
    }
    if (stream) {
      if (!send_all(fd, "ok stream\n")) return;
      // A reader that goes away is noticed at the next wake-up (poll's hang-up), not only at a write.
      auto gone = [&] {
        if (stopping_) return true;
        pollfd peer{fd, POLLRDHUP, 0};
        return ::poll(&peer, 1, 0) > 0 && (peer.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
      };
      for (;;) {
        const std::string lines = events_.take(gone);
        if (lines.empty() || !send_all(fd, lines)) return;
      }
    }
    if (!send_all(fd, encode_reply(core_.call(std::move(**request))))) return;
  }
}

}  // namespace xprobe::session
