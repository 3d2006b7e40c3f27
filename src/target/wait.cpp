#include "target/wait.h"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace xprobe::target {
namespace {

volatile sig_atomic_t g_stop_requested = 0;
int g_stop_signals_depth = 0;
sigset_t g_original_mask;
bool g_have_original_mask = false;

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGCHLD);
  return set;
}

}  // namespace

StopSignals::StopSignals() {
  if (g_stop_signals_depth++ > 0) return;
  sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, &g_original_mask);
  g_have_original_mask = true;
}

StopSignals::~StopSignals() {
  if (--g_stop_signals_depth > 0) return;
  // Signals taken by sigtimedwait are gone; any still pending would be delivered now with
  // their default action (killing the tracer on SIGINT), so drain them first.
  sigset_t set = stop_set();
  timespec zero{0, 0};
  siginfo_t info;
  while (sigtimedwait(&set, &info, &zero) > 0) {
    if (info.si_signo == SIGINT || info.si_signo == SIGTERM) g_stop_requested = 1;
  }
  pthread_sigmask(SIG_SETMASK, &g_original_mask, nullptr);
  g_have_original_mask = false;
}

bool stop_requested() { return g_stop_requested != 0; }
void request_stop() { g_stop_requested = 1; }
void clear_stop_request() { g_stop_requested = 0; }

const void* original_signal_mask() { return g_have_original_mask ? &g_original_mask : nullptr; }

Result<std::optional<RawWait>> wait_any(std::optional<pid_t> tid) {
  pid_t which = tid ? *tid : -1;
  for (;;) {
    // A specific tid is waited for inside a protocol step (an injected syscall, an
    // interrupt); the stop request is honoured by the caller's next general wait.
    if (!tid && g_stop_requested) return std::optional<RawWait>();
    if (g_stop_signals_depth == 0) {
      int status = 0;
      pid_t got = waitpid(which, &status, __WALL);
      if (got > 0) return std::optional<RawWait>(RawWait{got, status});
      if (errno == EINTR) continue;
      return make_error(fmt::format("waitpid: {}", std::strerror(errno)));
    }
    int status = 0;
    pid_t got = waitpid(which, &status, __WALL | WNOHANG);
    if (got > 0) return std::optional<RawWait>(RawWait{got, status});
    if (got < 0 && errno != EINTR) return make_error(fmt::format("waitpid: {}", std::strerror(errno)));
    sigset_t set = stop_set();
    siginfo_t info;
    timespec timeout{0, 200'000'000};  // a SIGCHLD can coalesce; poll waitpid now and then anyway
    int taken = sigtimedwait(&set, &info, &timeout);
    if (taken == SIGINT || taken == SIGTERM) g_stop_requested = 1;
  }
}

}  // namespace xprobe::target
