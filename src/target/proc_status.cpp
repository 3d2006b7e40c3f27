#include "target/proc_status.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace xprobe::target {

std::optional<ProcStatus> ProcStatus::of_process(pid_t pid) { return parse_file(fmt::format("/proc/{}/status", pid)); }

std::optional<ProcStatus> ProcStatus::of_thread(pid_t pid, pid_t tid) {
  return parse_file(fmt::format("/proc/{}/task/{}/status", pid, tid));
}

std::optional<ProcStatus> ProcStatus::parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

ProcStatus ProcStatus::parse(std::string_view text) {
  ProcStatus status;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    status.fields_.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  return status;
}

std::optional<std::string_view> ProcStatus::field(std::string_view name) const {
  for (const auto& [key, value] : fields_)
    if (key == name) return std::string_view(value);
  return std::nullopt;
}

std::optional<long> ProcStatus::number(std::string_view name) const {
  auto value = field(name);
  if (!value) return std::nullopt;
  long result = 0;
  auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), result);
  if (error != std::errc() || end == value->data()) return std::nullopt;
  return result;
}

std::optional<uint64_t> ProcStatus::mask(std::string_view name) const {
  auto value = field(name);
  if (!value) return std::nullopt;
  uint64_t result = 0;
  auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), result, 16);
  if (error != std::errc() || end == value->data()) return std::nullopt;
  return result;
}

}  // namespace xprobe::target
