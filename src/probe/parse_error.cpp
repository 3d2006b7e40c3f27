#include "probe/parse_error.h"

#include <fmt/format.h>

#include <cmath>

namespace xprobe::probe {
namespace {

constexpr std::string_view kCommandLabel = "  Command: ";

std::string command_and_caret(const ParseError& error) {
  return fmt::format("{}{}\n{}^\n", kCommandLabel, error.command,
                     std::string(kCommandLabel.size() + error.column, ' '));
}

}  // namespace

ParseError parse_error_at(std::string_view command, size_t column, std::string_view message) {
  ParseError error;
  error.message = std::string(message);
  error.command = std::string(command);
  error.column = column;
  return error;
}

std::string ParseError::render(std::string_view origin) const {
  std::string where;
  if (line) where = fmt::format("{}:{}: ", file.empty() ? "<definitions>" : file, *line);
  return fmt::format("{}{}: error: {}\n", where, origin, message) + command_and_caret(*this);
}

std::string ParseError::render_kernel_style(double seconds, std::string_view subsystem) const {
  const auto whole = static_cast<unsigned long>(seconds);
  const auto micros = static_cast<unsigned long>(std::llround((seconds - static_cast<double>(whole)) * 1e6)) % 1000000ul;
  return fmt::format("[{:5}.{:06}] {}: error: {}\n", whole, micros, subsystem, message) +
         command_and_caret(*this);
}

}  // namespace xprobe::probe
