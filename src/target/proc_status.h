#pragma once
// /proc/PID/status and /proc/PID/task/TID/status, read once and asked by field name: the one
// parser of that format (the queries in proc_queries.h use it).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xprobe::target {

class ProcStatus {
 public:
  // nullopt when the process (or thread) is gone.
  static std::optional<ProcStatus> of_process(pid_t pid);
  static std::optional<ProcStatus> of_thread(pid_t pid, pid_t tid);
  static std::optional<ProcStatus> parse_file(const std::string& path);
  static ProcStatus parse(std::string_view text);

  // What follows "NAME:", white space trimmed; nullopt without such a line.
  std::optional<std::string_view> field(std::string_view name) const;
  // A decimal field (TracerPid, Seccomp); nullopt when missing or not a number.
  std::optional<long> number(std::string_view name) const;
  // A hexadecimal mask (SigPnd, ShdPnd, SigBlk).
  std::optional<uint64_t> mask(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace xprobe::target
