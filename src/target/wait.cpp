#include "target/wait.h"

#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

namespace xprobe::target {
namespace {

volatile sig_atomic_t g_stop_requested = 0;  // the signal number (SIGINT, SIGTERM), 0 if none
volatile sig_atomic_t g_wake_tid = 0;
std::atomic<bool> g_wake_requested{false};
std::atomic<pid_t> g_waiting_thread{0};
int g_stop_signals_depth = 0;
struct sigaction g_previous_int;
struct sigaction g_previous_term;

// A signal that lands after the flag was checked but before waitpid() blocked would not
// interrupt it; interrupting a tracee makes it stop, and that stop ends the wait for sure.
void on_stop_signal(int signal) {
  int saved_errno = errno;
  g_stop_requested = signal;
  pid_t wake = g_wake_tid;
  if (wake > 0) ::ptrace(PTRACE_INTERRUPT, wake, nullptr, nullptr);
  errno = saved_errno;
}

void on_idle_timer(int) {}

void install_idle_handler() {
  static bool installed = false;
  if (installed) return;
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_idle_timer;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: the blocked waitpid returns EINTR
  sigaction(SIGALRM, &action, nullptr);
  installed = true;
}

// A periodic timer, so that a tick that lands just before waitpid() blocks is followed by
// another one.
void arm_idle_timer(unsigned interval_ms) {
  if (interval_ms != 0) install_idle_handler();
  itimerval timer{};
  timer.it_value.tv_usec = static_cast<suseconds_t>(interval_ms) * 1000;
  timer.it_interval = timer.it_value;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

}  // namespace

StopSignals::StopSignals() {
  if (g_stop_signals_depth++ > 0) return;
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocked waitpid returns EINTR
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopSignals::~StopSignals() {
  if (--g_stop_signals_depth > 0) return;
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool stop_requested() { return g_stop_requested != 0; }
void request_stop() { g_stop_requested = SIGINT; }
int stop_signal() { return g_stop_requested; }
void clear_stop_request() { g_stop_requested = 0; }
void set_wake_thread(pid_t tid) { g_wake_tid = tid; }

void prepare_wake() {
  install_idle_handler();
  g_waiting_thread = static_cast<pid_t>(::syscall(SYS_gettid));
}

void wake_waiter() {
  g_wake_requested = true;
  // SIGALRM's handler does nothing: the signal only interrupts the waitpid of that thread.
  if (const pid_t waiter = g_waiting_thread; waiter != 0) ::syscall(SYS_tgkill, ::getpid(), waiter, SIGALRM);
}

constexpr int kPollsBeforeSleeping = 200;  // ~0.2 ms of waitpid(WNOHANG) at most

namespace {

// The one waitpid loop: `tid` for a protocol step (an injected system call, an interrupt),
// which a stop request does not end (the caller's next general wait honours it).
Result<WaitResult> wait_for(std::optional<pid_t> tid, const WaitOptions& options) {
  const pid_t which = tid ? *tid : -1;
  bool poll = options.poll_first;
  for (;;) {
    if (!tid && g_stop_requested) return WaitResult{};
    int status = 0;
    // A thread that was just resumed usually stops again within microseconds (the next hit).
    // Polling briefly first keeps this CPU awake: in a VM, sleeping and being woken by the
    // other CPU costs more than the whole hit.
    // A status once reaped is returned whatever else happened meanwhile: a stop request
    // that arrives with it is honoured by the next call. (Dropping it would leave that
    // thread in a ptrace-stop nobody knows about: the detach then waits for it forever.)
    pid_t got = 0;
    for (int spin = poll ? 0 : kPollsBeforeSleeping; spin < kPollsBeforeSleeping && got == 0; ++spin) {
      got = ::waitpid(which, &status, __WALL | WNOHANG);
      if (got == 0 && !tid && g_stop_requested) return WaitResult{};
    }
    bool timed_out = false;
    if (got == 0 && !tid && g_wake_requested.exchange(false)) return WaitResult{std::nullopt, true};
    if (got == 0) {
      const unsigned interval = tid ? 0 : options.idle_after_ms;
      if (interval != 0) arm_idle_timer(interval);
      got = ::waitpid(which, &status, __WALL);
      const int saved_errno = errno;
      if (interval != 0) arm_idle_timer(0);
      errno = saved_errno;
      timed_out = got < 0 && errno == EINTR && !tid && (interval != 0 || g_wake_requested.exchange(false));
    }
    if (got > 0) return WaitResult{RawWait{got, status}, false};
    if (errno == EINTR) {
      if (timed_out && !g_stop_requested) return WaitResult{std::nullopt, true};
      poll = true;
      continue;
    }
    return make_error(fmt::format("waitpid: {}", std::strerror(errno)));
  }
}

}  // namespace

Result<WaitResult> wait_any(const WaitOptions& options) { return wait_for(std::nullopt, options); }

Result<std::optional<RawWait>> wait_any(std::optional<pid_t> tid) {
  auto waited = wait_for(tid, WaitOptions{});
  if (!waited) return waited.error();
  return waited->status;
}

}  // namespace xprobe::target
