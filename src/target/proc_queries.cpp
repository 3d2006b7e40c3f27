#include "target/proc_queries.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "target/proc_status.h"

namespace xprobe::target {

std::vector<pid_t> list_tasks(pid_t pid) {
  std::vector<pid_t> tids;
  std::string path = fmt::format("/proc/{}/task", pid);
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return tids;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    tids.push_back(static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10)));
  }
  ::closedir(dir);
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::string tracer_description(pid_t pid) {
  auto status = ProcStatus::of_process(pid);
  const long tracer = status ? status->number("TracerPid").value_or(0) : 0;
  return tracer != 0 ? fmt::format(" (it is already traced by process {})", tracer) : "";
}

namespace {

// The four ids of a "Uid:" or "Gid:" line of /proc/PID/status (real, effective, saved, fs).
std::vector<long> status_ids(const ProcStatus& status, std::string_view name) {
  std::vector<long> ids;
  if (auto line = status.field(name)) {
    std::istringstream in{std::string(*line)};
    for (long id = 0; in >> id;) ids.push_back(id);
  }
  return ids;
}

bool has_cap_sys_ptrace() {
  auto own = ProcStatus::of_process(::getpid());
  constexpr int kCapSysPtrace = 19;
  return own && (own->mask("CapEff").value_or(0) >> kCapSysPtrace & 1) != 0;
}

}  // namespace

std::string ptrace_refusal(pid_t pid) {
  auto status = ProcStatus::of_process(pid);
  if (!status) return fmt::format("not permitted to trace process {}", pid);
  if (const long tracer = status->number("TracerPid").value_or(0); tracer != 0)
    return fmt::format("not permitted to trace process {}: it is already traced by process {} (one tracer at a time)", pid,
                       tracer);
  const bool privileged = has_cap_sys_ptrace();
  // The kernel lets a tracer without CAP_SYS_PTRACE attach only where its real uid and gid
  // equal every uid and gid of the target (kernel/ptrace.c, __ptrace_may_access).
  const auto uids = status_ids(*status, "Uid"), gids = status_ids(*status, "Gid");
  const auto differs = [](const std::vector<long>& ids, long own) {
    return std::any_of(ids.begin(), ids.begin() + std::min<size_t>(ids.size(), 3), [&](long id) { return id != own; });
  };
  if (!privileged && (differs(uids, static_cast<long>(::getuid())) || differs(gids, static_cast<long>(::getgid())))) {
    return fmt::format("not permitted to trace process {}: it runs as another user (uid {}, you are uid {}); tracing another "
                       "user's process needs CAP_SYS_PTRACE (run xprobe as root or as that user)",
                       pid, uids.size() > 1 ? uids[1] : -1, ::getuid());
  }
  std::ifstream scope_file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (scope_file >> scope) {
    if (scope == 1 && !privileged)
      return fmt::format("not permitted to trace process {}: kernel.yama.ptrace_scope is 1 (only a process's ancestors may "
                         "attach to it); set it to 0 (sysctl kernel.yama.ptrace_scope=0), give xprobe CAP_SYS_PTRACE, or "
                         "start the program under xprobe (xprobe trace ... -- PROGRAM)",
                         pid);
    if (scope == 2 && !privileged)
      return fmt::format("not permitted to trace process {}: kernel.yama.ptrace_scope is 2 (only CAP_SYS_PTRACE may attach); "
                         "run xprobe as root, or start the program under xprobe (xprobe trace ... -- PROGRAM)",
                         pid);
    if (scope == 3)
      return fmt::format("not permitted to trace process {}: kernel.yama.ptrace_scope is 3 (no process may attach, until "
                         "reboot); start the program under xprobe instead (xprobe trace ... -- PROGRAM)",
                         pid);
  }
  return fmt::format("not permitted to trace process {}: it is not dumpable (a set-user-ID or file-capability program, or "
                     "prctl(PR_SET_DUMPABLE, 0)) or a security module forbids it; tracing it needs CAP_SYS_PTRACE",
                     pid);
}

std::optional<bool> traced_by_us(pid_t pid, pid_t tid) {
  auto status = ProcStatus::of_thread(pid, tid);
  if (!status) return std::nullopt;
  auto tracer = status->number("TracerPid");
  if (!tracer) return std::nullopt;
  return *tracer == ::getpid();
}

int seccomp_mode(pid_t pid) {
  auto status = ProcStatus::of_process(pid);
  return status ? static_cast<int>(status->number("Seccomp").value_or(0)) : 0;
}

std::optional<pid_t> thread_group_of(pid_t tid) {
  auto status = ProcStatus::of_process(tid);  // /proc/TID/status: every thread has one
  if (!status) return std::nullopt;
  const auto tgid = status->number("Tgid");
  if (!tgid) return std::nullopt;
  return static_cast<pid_t>(*tgid);
}

bool uses_shadow_stack(pid_t pid) {
  auto status = ProcStatus::of_process(pid);
  if (!status) return false;
  auto features = status->field("x86_Thread_features");
  return features && features->find("shstk") != std::string_view::npos;
}

bool process_is_ending(pid_t pid) {
  auto status = ProcStatus::of_process(pid);
  if (!status) return true;
  if (auto state = status->field("State"); state && (state->find('Z') != std::string_view::npos ||
                                                     state->find('X') != std::string_view::npos))
    return true;
  constexpr uint64_t kSigkill = uint64_t{1} << (SIGKILL - 1);
  return (status->mask("ShdPnd").value_or(0) | status->mask("SigPnd").value_or(0)) & kSigkill;
}

bool signal_pending_unblocked(pid_t pid, pid_t tid, int signal) {
  auto status = ProcStatus::of_thread(pid, tid);
  if (!status) return false;
  const uint64_t bit = uint64_t{1} << (signal - 1);
  return (status->mask("SigPnd").value_or(0) & bit) && !(status->mask("SigBlk").value_or(0) & bit);
}

pid_t id_in_own_namespace(pid_t pid, pid_t tid) {
  auto status = tid == pid ? ProcStatus::of_process(pid) : ProcStatus::of_thread(pid, tid);
  if (!status) return tid;
  auto ids = status->field("NSpid");
  if (!ids || ids->empty()) return tid;
  const size_t last = ids->find_last_of(" \t");
  const std::string_view inner = last == std::string_view::npos ? *ids : ids->substr(last + 1);
  return static_cast<pid_t>(std::strtol(std::string(inner).c_str(), nullptr, 10));
}

Status check_traceable(pid_t pid) {
  if (pid <= 0) return make_error(fmt::format("invalid process id {}", pid));
  if (pid == ::getpid()) return make_error("xprobe cannot trace itself");
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!stat_file || !std::getline(stat_file, stat)) return make_error(fmt::format("no such process: {}", pid));
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return make_error(fmt::format("cannot parse /proc/{}/stat", pid));
  std::istringstream fields(stat.substr(paren + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0, tty = 0, tpgid = 0;
  unsigned long flags = 0;
  fields >> state >> ppid >> pgrp >> session >> tty >> tpgid >> flags;
  if (state == "Z" || state == "X") {
    return make_error(fmt::format("process {} is a zombie: it has exited and waits for its parent to reap it", pid));
  }
  constexpr unsigned long kKernelThreadFlag = 0x00200000;  // PF_KTHREAD
  if (flags & kKernelThreadFlag) {
    return make_error(fmt::format("process {} is a kernel thread: only user-space processes can be traced", pid));
  }
  return {};
}

}  // namespace xprobe::target
