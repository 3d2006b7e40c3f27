// Remote system calls from threads stopped at a ptrace event inside a system call.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "arch/registry.h"
#include "target/process.h"
#include "test_support.h"

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

// A tracer SIGKILLed in the middle of a remote system call leaves the thread to finish the call
// and resume where it was (arch/syscall_abi.h's resumable stub): the call is a 300 ms nanosleep
// so that the kill surely lands inside it, made once from the main thread (waiting in
// pthread_join: a system call to restart) and once from a worker stopped in its arithmetic.
// Before, the thread woke up at the stub's breakpoint and the program died of SIGTRAP.
TEST(RemoteCall, ATracerKilledMidCallLeavesTheThreadToResumeWhereItWas) {
  const std::string program = xprobe::testing::e2e_program("threads");
  const std::string calls = "30000000";
  const xprobe::testing::RunResult untraced = xprobe::testing::run_untraced({program, calls});
  ASSERT_EQ(untraced.exit_status, 0);
  for (const bool from_main_thread : {true, false}) {
    int output[2], ready[2];
    ASSERT_EQ(pipe(output), 0);
    ASSERT_EQ(pipe(ready), 0);
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(output[1], 1);
      close(output[0]);
      execl(program.c_str(), program.c_str(), calls.c_str(), nullptr);
      _exit(127);
    }
    close(output[1]);
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    for (int waited = 0; waited < 500; ++waited) {
      size_t count = 0;
      for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(tasks)) ++count;
      if (count >= 9) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const pid_t tracer = fork();
    if (tracer == 0) {
      close(ready[0]);
      auto process = Process::attach(pid);
      if (!process) _exit(2);
      pid_t tid = pid;
      for (const auto& [thread, state] : (*process)->threads())
        if (!from_main_thread && thread != pid) tid = thread;
      auto registers = (*process)->get_registers(tid);
      if (!registers || !arch::syscall_abi(arch::thread_arch(registers->raw)).value()->resumable()) _exit(3);
      auto area = (*process)->remote_mmap_near(tid, registers->ip(), 65536, PROT_READ | PROT_EXEC, uint64_t{1} << 40);
      if (!area) _exit(4);
      if (!(*process)->install_syscall_stub(tid, *area)) _exit(5);
      const struct timespec pause {0, 300 * 1000 * 1000};
      const uint64_t at = *area + 4096;
      if (!(*process)->write(at, std::span(reinterpret_cast<const uint8_t*>(&pause), sizeof pause))) _exit(6);
      const uint64_t args[] = {at, 0};
      if (write(ready[1], "x", 1) != 1) _exit(7);
      (void)(*process)->remote_syscall(tid, SYS_nanosleep, args);
      _exit(8);  // not reached: killed in the middle of the call
    }
    close(ready[1]);
    char byte = 0;
    const bool started = read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(tracer, SIGKILL);
    int tracer_status = 0;
    waitpid(tracer, &tracer_status, 0);
    const xprobe::testing::RunResult after = xprobe::testing::finish_child(output[0], pid);
    if (!started && WIFEXITED(tracer_status) && WEXITSTATUS(tracer_status) == 3) GTEST_SKIP() << "no resumable stub here";
    ASSERT_TRUE(started) << "the tracer failed before the call: exit " << WEXITSTATUS(tracer_status);
    EXPECT_TRUE(WIFSIGNALED(tracer_status) && WTERMSIG(tracer_status) == SIGKILL) << "the call ended before the kill";
    EXPECT_EQ(after.exit_status, untraced.exit_status) << (from_main_thread ? "main thread" : "worker");
    EXPECT_EQ(after.output, untraced.output) << (from_main_thread ? "main thread" : "worker");
  }
}

}  // namespace
}  // namespace xprobe::target
