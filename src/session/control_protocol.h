#pragma once
// The control socket's line protocol (docs/xprobe.1, CONTROL PROTOCOL), both sides of it.
// A request is one line:
//   add DEFINITION | remove [GRP/]EVENT | clear | enable [EVENT] | disable [EVENT] |
//   filter GRP/EVENT [EXPR] | format GRP/EVENT | list | stats | events | info | trace-pipe
// (EVENT: GRP/EVENT, GRP/ or EVENT; none: every event). A reply is a status line and a body:
//   "ok LENGTH\n" then LENGTH bytes, or "error ERRNO LENGTH\n" then LENGTH bytes of message
// (the kernel's errno and message for the same refusal, its caret included). `trace-pipe`
// is answered "ok stream\n" and then every event as it comes, until either side closes.
// Several requests may follow each other on one connection.
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/control_core.h"
#include "support/result.h"

namespace xprobe::session {

// The directory of the user's control sockets: $XDG_RUNTIME_DIR/xprobe, else
// /run/user/UID/xprobe, else /tmp/xprobe-UID; created mode 0700 when `create`, and refused
// when it is not the user's own or others may write into it.
Result<std::string> control_directory(bool create);
// A session's socket in that directory: named by the xprobe process that serves it.
std::string session_socket_path(const std::string& directory, pid_t session);
// The sessions whose sockets are there (by name; a stale one is found when connecting).
std::vector<pid_t> listed_sessions(const std::string& directory);

// A request line (without its newline). `trace-pipe` is not a request for the core:
// std::nullopt with `*stream` set. An error names what is wrong with the line.
Result<std::optional<ControlRequest>> parse_request_line(std::string_view line, bool* stream);
std::string encode_reply(const ControlReply& reply);

// The client side: one connection to a session's socket.
Result<int> connect_session(const std::string& socket_path);
// Sends the request line and reads its reply (fd stays open for the next).
Result<ControlReply> send_request(int fd, std::string_view line);
// Sends all of `bytes` on the socket `fd` (no SIGPIPE when the peer has gone): false if it could not.
bool send_all(int fd, std::string_view bytes);

}  // namespace xprobe::session
