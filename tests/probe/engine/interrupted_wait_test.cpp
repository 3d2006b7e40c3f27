// The tracer's waits and SIGINT/SIGTERM (StopSignals: a handler without SA_RESTART, so a
// blocked waitpid() returns EINTR). Each race is made deterministic by interposing waitpid()
// in this test binary: the interposer does, at the exact instant, what the signal would do.
//
// torture-findings #6: a stop request that arrived right after the polling waitpid() reaped a
// status dropped that status (the detach then waited forever for a thread that was already
// stopped), and an EINTR in the wait of a remote system call resumed the thread a second time,
// past the stub's int3 (zstd died of SIGSEGV at stub + 3). #7: an EINTR in the launch's first
// wait was reported as "the new process did not stop before exec".
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "target/process.h"
#include "target/wait.h"

namespace {

enum class Interposed {
  Off,
  StopAfterNextReap,          // a SIGINT landing right after a successful waitpid()
  InterruptNextBlockingWait,  // a SIGINT landing while a waitpid() blocks
  InterruptOnceStopped,       // the same, when the waited-for thread has meanwhile stopped
};

std::atomic<Interposed> g_interposed{Interposed::Off};
// A stop of this pid with SIGSEGV is answered with SIGKILL: the old remote-syscall loop would
// resume such a thread forever.
std::atomic<pid_t> g_kill_on_sigsegv{0};

}  // namespace

extern "C" pid_t waitpid(pid_t pid, int* status, int options) {
  const Interposed mode = g_interposed.load();
  if ((options & WNOHANG) == 0 && (mode == Interposed::InterruptNextBlockingWait || mode == Interposed::InterruptOnceStopped)) {
    if (mode == Interposed::InterruptOnceStopped) {
      siginfo_t info{};  // wait until there is something to reap, without reaping it
      (void)syscall(SYS_waitid, pid > 0 ? P_PID : P_ALL, pid > 0 ? pid : 0, &info, WEXITED | WSTOPPED | WNOWAIT | __WALL,
                    nullptr);
    }
    g_interposed = Interposed::Off;
    xprobe::target::request_stop();
    errno = EINTR;
    return -1;
  }
  const long got = syscall(SYS_wait4, pid, status, options, nullptr);
  if (got > 0 && mode == Interposed::StopAfterNextReap) {
    g_interposed = Interposed::Off;
    xprobe::target::request_stop();
  }
  if (got > 0 && got == g_kill_on_sigsegv.load() && status != nullptr && WIFSTOPPED(*status) &&
      WSTOPSIG(*status) == SIGSEGV) {
    kill(static_cast<pid_t>(got), SIGKILL);
  }
  return static_cast<pid_t>(got);
}

namespace xprobe::target {
namespace {

char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

// Runs the process to its end, suppressing the signals it gets, and returns its exit status
// (-1 if it did not exit).
int run_to_exit(Process& process) {
  if (!process.resume_all()) return -1;
  for (int events = 0; events < 64; ++events) {
    auto event = process.next_event();
    if (!event || !event->has_value()) return -1;
    const StopEvent& e = **event;
    if (e.kind == StopKind::Exited) return e.exit_status;
    if (e.kind == StopKind::Killed) return 128 + e.signal;
    if (!process.resume(e.tid, 0)) return -1;
  }
  return -1;
}

bool no_child_left() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG | __WALL) == -1 && errno == ECHILD;
}

class InterruptedWait : public ::testing::Test {
 protected:
  void SetUp() override { clear_stop_request(); }
  void TearDown() override {
    g_interposed = Interposed::Off;
    g_kill_on_sigsegv = 0;
    clear_stop_request();
  }
  StopSignals stop_signals_;
};

TEST_F(InterruptedWait, AStatusReapedTogetherWithAStopRequestIsStillReported) {
  auto launched = Process::launch({"/bin/sh", "-c", "kill -s USR1 $$; exit 7"});
  ASSERT_TRUE(launched) << launched.error().message;
  Process& process = **launched;
  ASSERT_TRUE(process.resume_all());
  // Wait (without reaping) until the shell sits in its SIGUSR1 signal-delivery-stop, so that
  // the status is there for the first waitpid() of next_event().
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (state_of(process.pid()) != 't' && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(state_of(process.pid()), 't');

  g_interposed = Interposed::StopAfterNextReap;
  auto event = process.next_event();
  ASSERT_TRUE(event) << event.error().message;
  ASSERT_TRUE(event->has_value()) << "the SIGUSR1 stop was reaped and then dropped for the stop request";
  EXPECT_EQ((*event)->kind, StopKind::Signal);
  EXPECT_EQ((*event)->signal, SIGUSR1);
  EXPECT_TRUE(stop_requested());

  // The request is honoured by the next wait, before anything else is reaped.
  auto next = process.next_event();
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_FALSE(next->has_value());

  clear_stop_request();
  ASSERT_TRUE(process.resume((*event)->tid, 0));  // suppressed: the shell would die of it
  EXPECT_EQ(run_to_exit(process), 7);
}

// The engine's situation: the stub lives in a slot area of its own, the rest of that slot is
// zero bytes (00 00 = add %al,(%rax): a fault for almost any rax).
TEST_F(InterruptedWait, ARemoteSystemCallWhoseWaitIsInterruptedRunsTheThreadOnce) {
  auto launched = Process::launch({"/bin/sh", "-c", "exit 5"});
  ASSERT_TRUE(launched) << launched.error().message;
  Process& process = **launched;
  const pid_t tid = process.pid();
  auto at_exec = process.get_registers(tid);
  ASSERT_TRUE(at_exec) << at_exec.error().message;
  auto area = process.remote_mmap_near(tid, at_exec->ip(), 4096, PROT_READ | PROT_EXEC, uint64_t{1} << 30);
  ASSERT_TRUE(area) << area.error().message;
  auto stub = process.syscall_stub_code(tid);
  ASSERT_TRUE(stub) << stub.error().message;
  ASSERT_TRUE(process.write(*area, *stub));
  process.set_syscall_stub(*area);
  // (Taken now: the first remote call let the exec the shell was stopped in finish.)
  auto before = process.get_registers(tid);
  ASSERT_TRUE(before) << before.error().message;

  g_kill_on_sigsegv = tid;
  g_interposed = Interposed::InterruptOnceStopped;
  auto result = process.remote_syscall(tid, SYS_getpid, {});
  ASSERT_TRUE(result) << result.error().message << " (the thread was resumed past the stub's int3)";
  EXPECT_EQ(*result, tid);
  EXPECT_TRUE(stop_requested());
  auto after = process.get_registers(tid);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->ip(), before->ip());
  EXPECT_EQ(after->sp(), before->sp());
  EXPECT_EQ(after->raw.rax, before->raw.rax);
  EXPECT_EQ(after->raw.orig_rax, before->raw.orig_rax);
  clear_stop_request();
  EXPECT_EQ(run_to_exit(process), 5);
}

TEST_F(InterruptedWait, ALaunchInterruptedBeforeTheProgramStartsSaysSoAndLeavesNothing) {
  g_interposed = Interposed::InterruptNextBlockingWait;
  auto launched = Process::launch({"/bin/sh", "-c", "exit 3"});
  ASSERT_FALSE(launched) << "the launch went on although it was interrupted before the exec";
  EXPECT_NE(launched.error().message.find("interrupted before the program started"), std::string::npos)
      << launched.error().message;
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(stop_signal(), SIGINT);
  EXPECT_TRUE(no_child_left()) << "the half-started child is still there";
}

}  // namespace
}  // namespace xprobe::target
