// A stop request (SIGINT/SIGTERM to the tracer) that arrives in the instant after waitpid()
// reaped a status must not make the tracer forget that status: the thread would sit in a
// ptrace-stop nobody knows about, and the detach would wait for it forever (torture-findings
// #6: xprobe hung in stop_all, was killed after 60 s and left its int3s in zstd).
//
// The instant is made deterministic by interposing waitpid() in this test binary: once armed,
// the first call that reaps a status requests the stop right after it, as a SIGINT landing
// there would.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "target/process.h"
#include "target/wait.h"

namespace {
std::atomic<bool> g_request_stop_after_next_reap{false};
}

extern "C" pid_t waitpid(pid_t pid, int* status, int options) {
  const long got = syscall(SYS_wait4, pid, status, options, nullptr);
  if (got > 0 && g_request_stop_after_next_reap.exchange(false)) xprobe::target::request_stop();
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

TEST(StopRequestRace, AStatusReapedTogetherWithAStopRequestIsStillReported) {
  StopSignals stop_signals;
  clear_stop_request();
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

  g_request_stop_after_next_reap = true;
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
  StopEvent last;
  for (int i = 0; i < 16; ++i) {
    auto more = process.next_event();
    ASSERT_TRUE(more) << more.error().message;
    ASSERT_TRUE(more->has_value());
    last = **more;
    if (last.kind == StopKind::Exited || last.kind == StopKind::Killed) break;
    ASSERT_TRUE(process.resume(last.tid, 0));
  }
  EXPECT_EQ(last.kind, StopKind::Exited);
  EXPECT_EQ(last.exit_status, 7);
}

}  // namespace
}  // namespace xprobe::target
