#pragma once
// A refused definition: the message, the definition, and where the caret goes, rendered the
// way the kernel's tracefs error_log shows it:
//
//   [  371.779625] trace_uprobe: error: Invalid register name
//     Command: p /bin/true:0x10 %foo
//                               ^
//
// The caret line is 11 columns ("  Command: ") plus the column, then '^'.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace xprobe::probe {

struct ParseError {
  std::string message;   // the kernel's text where the kernel has one
  std::string command;   // the definition, words joined by single spaces
  size_t column = 0;     // caret position in `command`
  std::optional<size_t> line;  // 1-based line in a -f file
  std::string file;            // the -f file's name, if any

  // "FILE:LINE: ORIGIN: error: MESSAGE" (or "ORIGIN: error: MESSAGE"), the Command line and
  // the caret line, each ending in '\n'.
  std::string render(std::string_view origin = "xprobe") const;
  // Exactly the kernel's shape: "[%5lu.%06lu] trace_uprobe: error: ...".
  std::string render_kernel_style(double seconds, std::string_view subsystem = "trace_uprobe") const;
};

// A refusal of `command` with the caret at `column`.
ParseError parse_error_at(std::string_view command, size_t column, std::string_view message);

template <typename T>
class [[nodiscard]] ParseResult {
 public:
  ParseResult(T value) : state_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  ParseResult(ParseError error) : state_(std::move(error)) {}   // NOLINT(google-explicit-constructor)
  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const ParseError& error() const { return std::get<ParseError>(state_); }

 private:
  std::variant<T, ParseError> state_;
};

}  // namespace xprobe::probe
