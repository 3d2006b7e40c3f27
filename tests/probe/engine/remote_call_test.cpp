// Remote system calls from threads stopped at a ptrace event inside a system call.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "target/process.h"

namespace xprobe::target {
namespace {

// The shell's fork (of a background job) stops it at PTRACE_EVENT_FORK, inside fork: the
// call returns the child's pid only when the thread is resumed. A remote call made from there
// ran system call number <child pid> instead of the one asked for (ENOSYS), and the registers
// restored after it made the shell's fork return ENOSYS (torture-findings #6: for clone3 in
// pthread_create, glibc then retried with clone, and two threads ran on one stack).
TEST(RemoteCall, FromAThreadStoppedInsideForkRunsTheCallAndForkStillReturnsTheChild) {
  auto launched = Process::launch({"/bin/sh", "-c", "/bin/true & wait; exit 6"});
  ASSERT_TRUE(launched) << launched.error().message;
  Process& process = **launched;
  const pid_t pid = process.pid();
  ASSERT_TRUE(process.resume_all());
  std::unique_ptr<Process> child;
  int exit_status = -1;
  bool called = false;
  for (int events = 0; events < 64 && exit_status < 0; ++events) {
    auto event = process.next_event();
    ASSERT_TRUE(event && event->has_value());
    const StopEvent& e = **event;
    if (e.kind == StopKind::Exited) {
      exit_status = e.exit_status;
      break;
    }
    if ((e.kind == StopKind::Fork || e.kind == StopKind::Vfork) && !called) {
      ASSERT_EQ(e.kind, StopKind::Fork) << "this shell vforks: the test needs a fork";
      auto result = process.remote_syscall(e.tid, SYS_getpid, {});
      ASSERT_TRUE(result) << result.error().message;
      EXPECT_EQ(*result, pid) << "the remote call did not run getpid";
      called = true;
      auto adopted = Process::adopt_child(e.new_pid);
      ASSERT_TRUE(adopted) << adopted.error().message;
      child = std::move(*adopted);
      ASSERT_TRUE(child->detach());
    }
    ASSERT_TRUE(process.resume(e.tid, e.kind == StopKind::Signal ? e.signal : 0));
  }
  EXPECT_TRUE(called) << "the shell never forked";
  EXPECT_EQ(exit_status, 6) << "the shell's fork failed after the remote call";
}

}  // namespace
}  // namespace xprobe::target
