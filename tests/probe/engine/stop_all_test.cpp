// Process::stop_all() is what every detach starts with: when it returns, no thread of the
// program may run, and none may hold a breakpoint's signal that the detach would then let
// loose on it (a breakpoint of ours the thread executed just before it was interrupted: the
// program would die of it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "arch/register_block.h"
#include "target/process.h"

namespace xprobe::target {
namespace {

bool breakpoint_signal_pending_in(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigPnd:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16) & (1ull << (arch::kBreakpointSignal - 1));
  }
  return false;
}

// A PTRACE_INTERRUPT that reaches a thread already in a ptrace-stop is kept for its next
// resume (kernel/ptrace.c: "another trap will happen after the current trap is ended"): the
// resume meant to deliver the pending signal ends in that interrupt stop instead. This
// happens when SIGINT's handler or an earlier stop_all() interrupts a thread that had stopped
// but was not reaped yet.
TEST(StopAll, APendingBreakpointSignalIsTakenEvenIfAnInterruptIsAlsoPending) {
  auto launched = Process::launch({"/bin/sh", "-c", "exit 4"});
  ASSERT_TRUE(launched) << launched.error().message;
  Process& process = **launched;
  const pid_t pid = process.pid();
  // Stopped at its exec: the breakpoint's signal becomes pending (as a breakpoint's would,
  // interrupted before its delivery), and an interrupt is queued behind the current stop.
  ASSERT_EQ(syscall(SYS_tgkill, pid, pid, arch::kBreakpointSignal), 0);
  ASSERT_EQ(ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr), 0);
  ASSERT_TRUE(breakpoint_signal_pending_in(pid));

  ASSERT_TRUE(process.stop_all());
  EXPECT_FALSE(breakpoint_signal_pending_in(pid)) << "stop_all() returned with the signal still pending";
  const auto& pending = process.pending_events();
  const bool reported = std::any_of(pending.begin(), pending.end(), [&](const StopEvent& event) {
    return event.tid == pid && event.signal == arch::kBreakpointSignal;
  });
  EXPECT_TRUE(reported) << "the signal's stop is not among the pending events";
  EXPECT_EQ(process.threads().at(pid), ThreadState::Stopped);

  // Suppress it and let the shell end normally.
  (void)process.take_pending_events();
  ASSERT_TRUE(process.resume(pid, 0));
  for (int events = 0; events < 16; ++events) {
    auto event = process.next_event();
    ASSERT_TRUE(event && event->has_value());
    if ((*event)->kind == StopKind::Exited) {
      EXPECT_EQ((*event)->exit_status, 4);
      return;
    }
    ASSERT_TRUE(process.resume((*event)->tid, 0));
  }
  ADD_FAILURE() << "the shell did not exit";
}

}  // namespace
}  // namespace xprobe::target
