#include "session/control_protocol.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace xprobe::session {
namespace {

Result<std::string> own_directory(const std::string& path, bool create) {
  if (create && ::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return make_error(fmt::format("{}: {}", path, std::strerror(errno)));
  if (!S_ISDIR(info.st_mode)) return make_error(fmt::format("{} is not a directory", path));
  // Someone else's directory (or one others can write into) could hold a socket that is not ours.
  if (info.st_uid != ::getuid() || (info.st_mode & 022) != 0)
    return make_error(fmt::format("{} is not the user's own directory (owner {}, mode {:o})", path, info.st_uid,
                                  info.st_mode & 07777));
  return path;
}

Result<std::string> read_line(int fd) {
  std::string line;
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(fmt::format("reading the reply: {}", std::strerror(errno)));
    if (n == 0) return make_error("the session closed the connection");
    if (c == '\n') return line;
    line += c;
    if (line.size() > 256) return make_error("a malformed reply");
  }
}

}  // namespace

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}


Result<std::string> control_directory(bool create) {
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && runtime[0] == '/') {
    if (own_directory(runtime, false)) return own_directory(fmt::format("{}/xprobe", runtime), create);
  }
  const std::string run_user = fmt::format("/run/user/{}", ::getuid());
  if (own_directory(run_user, false)) return own_directory(run_user + "/xprobe", create);
  return own_directory(fmt::format("/tmp/xprobe-{}", ::getuid()), create);
}

std::string session_socket_path(const std::string& directory, pid_t session) {
  return fmt::format("{}/session-{}.sock", directory, session);
}

std::vector<pid_t> listed_sessions(const std::string& directory) {
  std::vector<pid_t> sessions;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return sessions;
  constexpr std::string_view kPrefix = "session-", kSuffix = ".sock";
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    const std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) continue;
    sessions.push_back(static_cast<pid_t>(std::stol(std::string(digits))));
  }
  ::closedir(dir);
  std::sort(sessions.begin(), sessions.end());
  return sessions;
}

Result<std::optional<ControlRequest>> parse_request_line(std::string_view line, bool* stream) {
  *stream = false;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  const size_t space = line.find(' ');
  const std::string_view verb = line.substr(0, space);
  std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  using Verb = ControlRequest::Verb;
  auto request = [&](Verb v, std::string text = {}) { return std::optional<ControlRequest>(ControlRequest{v, std::move(text)}); };
  auto no_argument = [&](Verb v) -> Result<std::optional<ControlRequest>> {
    if (!rest.empty()) return make_error(fmt::format("'{}' takes no argument", verb));
    return request(v);
  };
  if (verb == "add") {
    if (rest.empty()) return make_error("add: give a definition (as written to uprobe_events)");
    return request(Verb::Add, std::string(rest));
  }
  if (verb == "remove") {
    if (rest.empty()) return make_error("remove: give the event (GRP/EVENT or EVENT)");
    return request(Verb::Add, "-:" + std::string(rest));
  }
  if (verb == "enable") return request(Verb::Enable, std::string(rest));
  if (verb == "disable") return request(Verb::Disable, std::string(rest));
  if (verb == "filter") {
    // "filter GRP/EVENT" shows the filter file, "filter GRP/EVENT EXPR" writes it ("0" clears).
    const size_t gap = rest.find(' ');
    const std::string_view event = rest.substr(0, gap);
    if (event.empty() || event.find('/') == std::string_view::npos)
      return make_error("filter: give the event as GRP/EVENT, then the filter (\"0\" clears it; none shows it)");
    if (gap == std::string_view::npos) return request(Verb::Filter, std::string(event));
    return request(Verb::SetFilter, std::string(rest));
  }
  if (verb == "format") {
    if (rest.empty() || rest.find('/') == std::string_view::npos) return make_error("format: give the event as GRP/EVENT");
    return request(Verb::Format, std::string(rest));
  }
  if (verb == "clear") return no_argument(Verb::Clear);
  if (verb == "list") return no_argument(Verb::List);
  if (verb == "stats") return no_argument(Verb::Stats);
  if (verb == "events") return no_argument(Verb::Events);
  if (verb == "info") return no_argument(Verb::Info);
  if (verb == "trace-pipe") {
    if (!rest.empty()) return make_error("'trace-pipe' takes no argument");
    *stream = true;
    return std::optional<ControlRequest>();
  }
  return make_error(fmt::format("unknown request '{}' (add, remove, clear, enable, disable, filter, format, list, stats, "
                                "events, info, trace-pipe)",
                                verb));
}

std::string encode_reply(const ControlReply& reply) {
  if (reply.error == 0) return fmt::format("ok {}\n{}", reply.text.size(), reply.text);
  return fmt::format("error {} {}\n{}", reply.error, reply.text.size(), reply.text);
}

Result<int> connect_session(const std::string& socket_path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof address.sun_path) return make_error(fmt::format("{}: the path is too long", socket_path));
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    return make_error(fmt::format("cannot connect to {}: {}", socket_path, std::strerror(error)));
  }
  return fd;
}

Result<ControlReply> send_request(int fd, std::string_view line) {
  if (!send_all(fd, fmt::format("{}\n", line))) return make_error(fmt::format("sending the request: {}", std::strerror(errno)));
  auto status = read_line(fd);
  if (!status) return status.error();
  ControlReply reply;
  size_t length = 0;
  int error = 0;
  unsigned long long parsed = 0;
  if (std::sscanf(status->c_str(), "ok %llu", &parsed) == 1) {
    length = parsed;
  } else if (std::sscanf(status->c_str(), "error %d %llu", &error, &parsed) == 2 && error > 0) {
    reply.error = error;
    length = parsed;
  } else {
    return make_error(fmt::format("a malformed reply '{}'", *status));
  }
  if (length > (size_t{64} << 20)) return make_error("a reply longer than 64 MiB");
  reply.text.resize(length);
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::read(fd, reply.text.data() + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error("the session closed the connection mid-reply");
    done += static_cast<size_t>(n);
  }
  return reply;
}

}  // namespace xprobe::session
