#include "target/process.h"

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "target/proc_queries.h"
#include "target/process_internal.h"

namespace xprobe::target {

using namespace detail;

// Starting a traced program, attaching to a running one, adopting a traced child.
namespace {

Result<std::string> find_program(const std::string& name) {
  auto executable = [](const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return make_error("no program given");
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), F_OK) != 0) return make_error(fmt::format("program not found: {}", name));
    if (!executable(name)) return make_error(fmt::format("cannot execute {}: not an executable file", name));
    return name;
  }
  const char* path_env = std::getenv("PATH");
  std::string search = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream dirs(search);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return make_error(fmt::format("program not found: {} (not in PATH)", name));
}

}  // namespace

Result<std::unique_ptr<Process>> Process::launch(const std::vector<std::string>& argv, const LaunchOptions& options) {
  if (argv.empty()) return make_error("no program given");
  auto path = find_program(argv[0]);
  if (!path) return path.error();

  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) return make_error(fmt::format("pipe: {}", errno_text()));
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return make_error(fmt::format("fork: {}", errno_text()));
  if (pid == 0) {
    ::close(error_pipe[0]);
    // Stop so that the parent can PTRACE_SEIZE us (SEIZE gives PTRACE_LISTEN and clean
    // group-stop reporting, which PTRACE_TRACEME does not).
    ::raise(SIGSTOP);
    ::execv(path->c_str(), args.data());
    int error = errno;
    // The child's last word: if even this write fails, the parent sees exit 127 and says so.
    ssize_t ignored = ::write(error_pipe[1], &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }
  ::close(error_pipe[1]);
  auto fail = [&](std::string message) -> Result<std::unique_ptr<Process>> {
    ::kill(pid, SIGKILL);
    for (;;) {
      int status = 0;
      const pid_t got = ::waitpid(pid, &status, __WALL);
      if (got < 0 && errno == EINTR) continue;  // a second SIGINT must not leave a zombie
      if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) break;
    }
    ::close(error_pipe[0]);
    return make_error(std::move(message));
  };

  int status = 0;
  pid_t stopped = 0;
  do {
    stopped = ::waitpid(pid, &status, WUNTRACED);
    // SIGINT/SIGTERM reached xprobe (StopSignals) while the child was on its way to its
    // SIGSTOP: it has run none of the program, so it is killed and that is the whole story.
    if (stopped < 0 && errno == EINTR && stop_requested()) return fail("interrupted before the program started");
  } while (stopped < 0 && errno == EINTR);
  if (stopped != pid || !WIFSTOPPED(status)) return fail("the new process did not stop before exec");
  if (stop_requested()) return fail("interrupted before the program started");
  long seize_options = kTraceOptions | (options.kill_on_tracer_exit ? PTRACE_O_EXITKILL : 0);
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, seize_options) != 0) {
    return fail(fmt::format("ptrace(PTRACE_SEIZE) of the new process failed: {}", errno_text()));
  }
  ::kill(pid, SIGCONT);
  std::unique_ptr<Process> process(new Process(pid, true));
  for (;;) {
    int wait_status = 0;
    pid_t got = ::waitpid(pid, &wait_status, __WALL);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("waitpid: {}", errno_text()));
    }
    if (WIFEXITED(wait_status) || WIFSIGNALED(wait_status)) {
      process->alive_ = false;
      int exec_error = 0;
      std::string message = fmt::format("{} exited before it could be traced", argv[0]);
      if (::read(error_pipe[0], &exec_error, sizeof exec_error) == static_cast<ssize_t>(sizeof exec_error)) {
        message = fmt::format("cannot execute {}: {}", *path, std::strerror(exec_error));
      }
      ::close(error_pipe[0]);
      return make_error(message);
    }
    int signal = WSTOPSIG(wait_status);
    int event = wait_status >> 16;
    if (event == PTRACE_EVENT_EXEC) break;
    int deliver = 0;
    if (event == 0 && signal != SIGSTOP && signal != SIGCONT) deliver = signal;  // ours are SIGSTOP/SIGCONT
    ::ptrace(PTRACE_CONT, pid, nullptr, deliver);
  }
  ::close(error_pipe[0]);
  process->threads_[pid] = ThreadState::Stopped;
  if (auto opened = process->open_memory(); !opened) return opened.error();
  set_wake_thread(pid);
  return process;
}

Result<std::unique_ptr<Process>> Process::attach(pid_t pid) {
  if (auto traceable = check_traceable(pid); !traceable) return traceable.error();
  std::unique_ptr<Process> process(new Process(pid, false));
  // Threads may be created while we attach; those created by already-seized threads are
  // attached by TRACECLONE, the others are found by scanning again until nothing is new.
  std::set<pid_t> seized;
  for (bool found_new = true; found_new;) {
    found_new = false;
    for (pid_t tid : list_tasks(pid)) {
      if (seized.count(tid) || process->threads_.count(tid)) continue;
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, kTraceOptions) != 0) {
        int error = errno;
        if (error == ESRCH && tid != pid) continue;  // the thread exited meanwhile
        if (error == EPERM && tid != pid) {
          std::optional<bool> ours = traced_by_us(pid, tid);
          if (!ours) continue;  // gone meanwhile
          if (*ours) {
            // Created meanwhile by a thread we had seized, and attached with it (TRACECLONE):
            // its first stop is on its way.
            process->threads_.emplace(tid, ThreadState::Starting);
            found_new = true;
            continue;
          }
        }
        std::string reason;
        if (error == EPERM) {
          reason = ptrace_refusal(pid);
        } else if (error == ESRCH) {
          reason = fmt::format("no such process: {}", pid);
        } else {
          reason = fmt::format("cannot attach to process {}: {}", pid, std::strerror(error));
        }
        for (pid_t done : seized) ::ptrace(PTRACE_DETACH, done, nullptr, 0);
        process->alive_ = false;
        process->threads_.clear();
        return make_error(reason);
      }
      seized.insert(tid);
      ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
      process->threads_[tid] = ThreadState::Running;
      found_new = true;
    }
  }
  if (auto opened = process->open_memory(); !opened) return opened.error();
  if (auto stopped = process->stop_all(); !stopped) return stopped.error();
  set_wake_thread(pid);
  return process;
}

Result<std::unique_ptr<Process>> Process::adopt_child(pid_t pid) {
  std::unique_ptr<Process> process(new Process(pid, false));
  process->threads_[pid] = ThreadState::Starting;
  process->waiting_for_interrupt_ = true;
  if (auto stopped = process->wait_until_stopped(pid); !stopped) return stopped.error();
  process->waiting_for_interrupt_ = false;
  // The first stop of an auto-attached child is a NewThread event: not news to anyone.
  std::erase_if(process->pending_, [&](const StopEvent& event) { return event.kind == StopKind::NewThread; });
  if (!process->owns(pid)) return make_error(fmt::format("child process {} vanished", pid));
  if (auto opened = process->open_memory(); !opened) return opened.error();
  return process;
}

}  // namespace xprobe::target
