// xprobe ctl: the client of a live session's control socket (session/control_protocol.h).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "session/control_protocol.h"

namespace xprobe::cli {
namespace {

void say(const std::string& message) { fmt::print(stderr, "xprobe ctl: {}\n", message); }

// The sessions that answer, each with its "info".
std::vector<std::pair<pid_t, std::string>> answering_sessions(const std::string& directory) {
  std::vector<std::pair<pid_t, std::string>> found;
  for (pid_t pid : session::listed_sessions(directory)) {
    const std::string path = session::session_socket_path(directory, pid);
    auto fd = session::connect_session(path);
    if (!fd) {
      // Its xprobe is gone (killed before it could remove the socket): nobody will answer there.
      if (::kill(pid, 0) != 0 && errno == ESRCH) ::unlink(path.c_str());
      continue;
    }
    auto info = session::send_request(*fd, "info");
    ::close(*fd);
    if (info && info->error == 0) found.emplace_back(pid, info->text);
  }
  return found;
}

int copy_stream(int fd) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;  // the session ended
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
      const ssize_t written = ::write(STDOUT_FILENO, buffer + done, static_cast<size_t>(n) - done);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return 0;  // the reader went away (| head)
      done += static_cast<size_t>(written);
    }
  }
}

}  // namespace

int run_ctl(const CtlOptions& options) {
  if (options.words.empty()) {
    say("give a request: add DEF | remove EVENT | clear | enable [EVENT] | disable [EVENT] | filter GRP/EVENT [EXPR] | "
        "format GRP/EVENT | list | stats | trace-pipe | list-sessions");
    return 2;
  }
  auto directory = session::control_directory(false);
  if (!directory) {
    say(directory.error().message);
    return 1;
  }
  std::string line;
  for (const std::string& word : options.words) line += (line.empty() ? "" : " ") + word;
  if (options.words.front() == "list-sessions") {
    for (const auto& [pid, info] : answering_sessions(*directory)) {
      std::string text = info;
      for (char& c : text)
        if (c == '\n') c = ' ';
      fmt::print("{} {}\n", pid, text);
    }
    return 0;
  }
  pid_t pid = options.session;
  if (pid == 0) {
    const auto sessions = answering_sessions(*directory);
    if (sessions.size() != 1) {
      say(sessions.empty() ? fmt::format("no live session in {} (start one with xprobe trace --ctl)", *directory)
                           : fmt::format("{} sessions run: choose one with --session (xprobe ctl list-sessions)",
                                         sessions.size()));
      return 1;
    }
    pid = sessions.front().first;
  }
  auto fd = session::connect_session(session::session_socket_path(*directory, pid));
  if (!fd) {
    say(fd.error().message);
    return 1;
  }
  if (options.words.front() == "trace-pipe") {
    ::signal(SIGPIPE, SIG_IGN);
    const std::string request = line + "\n";
    if (::write(*fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
      say(fmt::format("sending the request: {}", std::strerror(errno)));
      return 1;
    }
    std::string status;
    char c = 0;
    while (::read(*fd, &c, 1) == 1 && c != '\n') status += c;
    if (status != "ok stream") {
      say(fmt::format("the session refused the stream: {}", status));
      return 1;
    }
    const int result = copy_stream(*fd);
    ::close(*fd);
    return result;
  }
  auto reply = session::send_request(*fd, line);
  ::close(*fd);
  if (!reply) {
    say(reply.error().message);
    return 1;
  }
  if (reply->error != 0) {
    fmt::print(stderr, "xprobe ctl: {} ({}):\n{}", std::strerror(reply->error), reply->error, reply->text);
    return 1;
  }
  fmt::print("{}", reply->text);
  return 0;
}

}  // namespace xprobe::cli
