#include "target/process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "target/wait.h"
#include "test_support.h"

namespace xprobe::target {
namespace {

using testing::CapturedStdout;
using testing::e2e_program;
using testing::run_untraced;

// Runs the process until it exits, delivering every signal; returns the exit status.
int run_to_exit(Process& process) {
  if (!process.resume_all()) return -1;
  for (;;) {
    auto event = process.next_event();
    if (!event || !*event) return -1;
    switch ((*event)->kind) {
      case StopKind::Exited: return (*event)->exit_status;
      case StopKind::Killed: return 128 + (*event)->signal;
      case StopKind::ThreadExited:
      case StopKind::Foreign: break;
      case StopKind::Trap:
      case StopKind::Signal:
        if (!process.resume((*event)->tid, (*event)->signal)) return -1;
        break;
      default:
        if (!process.resume((*event)->tid)) return -1;
    }
  }
}

// Attach once `wanted` threads exist (a fixed sleep is too short on a loaded machine).
void wait_for_threads(pid_t pid, size_t wanted) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (int waited = 0; waited < 500; ++waited) {
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(tasks)) ++count;
    if (count >= wanted) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST(ProcessTest, LaunchStopsAtExecAndRunsToTheSameResultAsUntraced) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program, "5"});
  ASSERT_EQ(untraced.exit_status, 3);

  CapturedStdout captured;
  auto process = Process::launch({program, "5"});
  captured.restore();
  ASSERT_TRUE(process) << process.error().message;
  EXPECT_TRUE((*process)->launched());
  EXPECT_EQ((*process)->threads().size(), 1u);

  auto maps = (*process)->maps();
  ASSERT_TRUE(maps);
  auto registers = (*process)->get_registers((*process)->pid());
  ASSERT_TRUE(registers);
  // Stopped at the exec: nothing has run but the kernel's setup, rip is the dynamic linker's entry.
  const MapEntry* at_rip = find_mapping(*maps, registers->ip());
  ASSERT_NE(at_rip, nullptr);
  EXPECT_NE(at_rip->path.find("ld-linux"), std::string::npos) << at_rip->path;
  EXPECT_TRUE(at_rip->executable);

  // The program's own image: its ELF header is where maps says it is.
  uint64_t bias = testing::load_bias((*process)->pid(), program);
  ASSERT_NE(bias, 0u);
  uint8_t magic[4] = {};
  ASSERT_TRUE((*process)->read(bias, magic));
  EXPECT_EQ(std::memcmp(magic, "\x7f" "ELF", 4), 0);

  EXPECT_EQ(run_to_exit(**process), untraced.exit_status);
  EXPECT_FALSE((*process)->alive());
  EXPECT_EQ(captured.text(), untraced.output);
}

TEST(ProcessTest, MemoryWritesReachReadOnlyCodeAndBatchedReadsStopAtUnmappedPages) {
  std::string program = e2e_program("counter");
  auto process = Process::launch({program});
  ASSERT_TRUE(process) << process.error().message;
  uint64_t add = testing::symbol_address((*process)->pid(), program, "add");
  ASSERT_NE(add, 0u);
  uint8_t original[4];
  ASSERT_TRUE((*process)->read(add, original));
  const uint8_t patch[4] = {0xde, 0xad, 0xbe, 0xef};
  ASSERT_TRUE((*process)->write(add, patch));
  uint8_t back[4];
  ASSERT_TRUE((*process)->read(add, back));
  EXPECT_EQ(std::memcmp(back, patch, 4), 0);
  ASSERT_TRUE((*process)->write(add, original));

  // A read that starts 8 bytes before the end of a mapping with nothing after it.
  auto maps = (*process)->maps();
  ASSERT_TRUE(maps);
  uint64_t edge = 0;
  for (size_t i = 0; i + 1 < maps->size(); ++i) {
    if ((*maps)[i].readable && (*maps)[i + 1].start != (*maps)[i].end) {
      edge = (*maps)[i].end;
      break;
    }
  }
  ASSERT_NE(edge, 0u);
  uint8_t first[16], second[8], third[4];
  ReadRequest requests[] = {{edge - 8, first, 0}, {add, second, 0}, {0x10, third, 0}};
  ASSERT_TRUE((*process)->read_batch(requests));
  EXPECT_EQ(requests[0].copied, 8u);
  EXPECT_EQ(requests[1].copied, 8u);
  EXPECT_EQ(std::memcmp(second, original, 4), 0);
  EXPECT_EQ(requests[2].copied, 0u);
  EXPECT_FALSE((*process)->read(0x10, third));
}

TEST(ProcessTest, RemoteMmapPlacesAnExecutableAreaWithinReachAndLeavesRegistersAlone) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program});
  CapturedStdout captured;
  auto process = Process::launch({program});
  captured.restore();
  ASSERT_TRUE(process) << process.error().message;
  pid_t pid = (*process)->pid();
  uint64_t add = testing::symbol_address(pid, program, "add");
  auto before = (*process)->get_registers(pid);
  ASSERT_TRUE(before);

  constexpr uint64_t kReach = uint64_t{1} << 31;
  auto area = (*process)->remote_mmap_near(pid, add, 65536, PROT_READ | PROT_EXEC, kReach - 65536);
  ASSERT_TRUE(area) << area.error().message;
  uint64_t distance = *area > add ? *area - add : add - *area;
  EXPECT_LT(distance, kReach);
  auto maps = (*process)->maps();
  ASSERT_TRUE(maps);
  const MapEntry* entry = find_mapping(*maps, *area);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->start, *area);
  EXPECT_EQ(entry->end, *area + 65536);
  EXPECT_TRUE(entry->executable);
  EXPECT_FALSE(entry->writable);

  // The remote call restored every register but rax: the program was stopped inside its exec,
  // which a remote call first lets finish (the exec's result lands in rax: 0, as when the
  // program is simply resumed; see Process::settle_for_remote_call).
  auto after = (*process)->get_registers(pid);
  ASSERT_TRUE(after);
  Registers expected = *before;
#if defined(__aarch64__)
  expected.raw.regs[0] = 0;
#else
  expected.raw.rax = 0;
#endif
  EXPECT_EQ(std::memcmp(&expected.raw, &after->raw, sizeof expected.raw), 0);

  // A stub in the new area serves the next remote call without patching code.
  auto stub = (*process)->syscall_stub_code(pid);
  ASSERT_TRUE(stub) << stub.error().message;
  ASSERT_TRUE((*process)->write(*area, *stub));
  (*process)->set_syscall_stub(*area);
  auto getpid_result = (*process)->remote_syscall(pid, SYS_getpid, {});
  ASSERT_TRUE(getpid_result);
  EXPECT_EQ(*getpid_result, pid);

  EXPECT_EQ(run_to_exit(**process), untraced.exit_status);
  EXPECT_EQ(captured.text(), untraced.output);
}

TEST(ProcessTest, AttachStopsEveryThreadAndDetachLeavesTheProgramRunningUntouched) {
  std::string program = e2e_program("ticker");
  auto untraced = run_untraced({program, "150"});
  ASSERT_EQ(untraced.exit_status, 0);

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(program.c_str(), program.c_str(), "150", nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  wait_for_threads(pid, 2);
  {
    auto process = Process::attach(pid);
    ASSERT_TRUE(process) << process.error().message;
    EXPECT_FALSE((*process)->launched());
    EXPECT_EQ((*process)->threads().size(), 2u);
    for (const auto& [tid, state] : (*process)->threads()) EXPECT_EQ(state, ThreadState::Stopped) << tid;
    // A second tracer is refused, with the reason.
    auto again = Process::attach(pid);
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().message.find("not permitted"), std::string::npos) << again.error().message;
    ASSERT_TRUE((*process)->resume_all());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ASSERT_TRUE((*process)->detach());
  }
  const xprobe::testing::RunResult finished = xprobe::testing::finish_child(pipe_fds[0], pid);
  EXPECT_EQ(finished.exit_status, untraced.exit_status);
  EXPECT_EQ(finished.output, untraced.output);
}

// A leader killed with its threads is not reported before the other threads are reaped, and
// only their tracer reaps them: stopping everything right after a SIGKILL from outside must not
// wait for the leader alone (Faults.ProgramKilledFromOutsideWhileTraced hung so once).
TEST(ProcessTest, StopAllReturnsWhenTheProgramWasJustKilledFromOutside) {
  std::string program = e2e_program("ticker");
  pid_t pid = fork();
  if (pid == 0) {
    execl(program.c_str(), program.c_str(), "100000", nullptr);
    _exit(127);
  }
  wait_for_threads(pid, 2);
  auto process = Process::attach(pid);
  ASSERT_TRUE(process) << process.error().message;
  ASSERT_EQ((*process)->threads().size(), 2u);
  ASSERT_TRUE((*process)->resume_all());
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both threads are dead now
  // ptrace requests come from the attaching thread: stop_all() runs here, a watchdog beside it
  // reaps the dead threads itself after 10 s (any thread of the tracer may wait), which unblocks it.
  std::atomic<bool> returned{false}, rescued{false};
  std::thread watchdog([&] {
    for (int waited = 0; waited < 1000 && !returned; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (returned) return;
    rescued = true;
    for (int i = 0; i < 4; ++i) waitpid(-1, nullptr, __WALL | WNOHANG);
  });
  static_cast<void>((*process)->stop_all());
  returned = true;
  watchdog.join();
  EXPECT_FALSE(rescued) << "stop_all() waited for the killed leader alone for 10 s";
}

TEST(ProcessTest, ClearErrorsForUntraceableTargets) {
  auto missing = Process::launch({"/nonexistent/program"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "program not found: /nonexistent/program");
  auto not_in_path = Process::launch({"xprobe-no-such-command"});
  ASSERT_FALSE(not_in_path);
  EXPECT_EQ(not_in_path.error().message, "program not found: xprobe-no-such-command (not in PATH)");

  auto no_pid = Process::attach(999999999);
  ASSERT_FALSE(no_pid);
  EXPECT_EQ(no_pid.error().message, "no such process: 999999999");

  auto self = Process::attach(getpid());
  ASSERT_FALSE(self);
  EXPECT_EQ(self.error().message, "xprobe cannot trace itself");

  pid_t zombie = fork();
  if (zombie == 0) _exit(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto zombie_attach = Process::attach(zombie);
  ASSERT_FALSE(zombie_attach);
  EXPECT_NE(zombie_attach.error().message.find("is a zombie"), std::string::npos) << zombie_attach.error().message;
  waitpid(zombie, nullptr, 0);

  // kthreadd is pid 2 wherever the kernel's threads are visible.
  if (access("/proc/2/stat", R_OK) == 0) {
    auto kernel_thread = Process::attach(2);
    ASSERT_FALSE(kernel_thread);
    EXPECT_NE(kernel_thread.error().message.find("kernel thread"), std::string::npos) << kernel_thread.error().message;
  }
}

TEST(ProcessTest, ProgramsOwnSigtrapIsReportedAsASignalOrForeignTrap) {
  std::string program = e2e_program("own_trap");
  auto untraced = run_untraced({program});
  CapturedStdout captured;
  auto process = Process::launch({program});
  captured.restore();
  ASSERT_TRUE(process) << process.error().message;
  ASSERT_TRUE((*process)->resume_all());
  int raised = 0, breakpoints = 0;
  int exit_status = -1;
  for (bool done = false; !done;) {
    auto event = (*process)->next_event();
    ASSERT_TRUE(event && *event);
    switch ((*event)->kind) {
      case StopKind::Exited: exit_status = (*event)->exit_status; done = true; break;
      case StopKind::Trap: ++breakpoints; ASSERT_TRUE((*process)->resume((*event)->tid, (*event)->signal)); break;
      case StopKind::Signal:
        if ((*event)->signal == SIGTRAP) ++raised;
        ASSERT_TRUE((*process)->resume((*event)->tid, (*event)->signal));
        break;
      case StopKind::Foreign:
      case StopKind::ThreadExited: break;
      default: ASSERT_TRUE((*process)->resume((*event)->tid)); break;
    }
  }
  // Its breakpoints of the trap engine's kind are Trap stops (x86: its hlts; AArch64: its BRKs),
  // everything else, x86's int3 included, a signal.
#if defined(__x86_64__)
  EXPECT_EQ(raised, 6);
#else
  EXPECT_EQ(raised, 3);
#endif
  EXPECT_EQ(breakpoints, 3);
  EXPECT_EQ(exit_status, untraced.exit_status);
  EXPECT_EQ(captured.text(), untraced.output);
}

}  // namespace
}  // namespace xprobe::target

namespace xprobe::target {
namespace {

char process_state(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text;
  std::getline(stat, text);
  size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ? '?' : text[paren + 2];
}

// A program stopped by job control (SIGSTOP, Ctrl-Z) stays stopped while traced and after
// the detach; SIGCONT then lets it finish normally.
TEST(ProcessTest, AGroupStoppedProgramStaysStoppedThroughAttachAndDetach) {
  std::string program = testing::e2e_program("ticker");
  auto untraced = testing::run_untraced({program, "50"});
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(program.c_str(), program.c_str(), "50", nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  kill(pid, SIGSTOP);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, WUNTRACED), pid);
  ASSERT_TRUE(WIFSTOPPED(status));
  {
    auto process = Process::attach(pid);
    ASSERT_TRUE(process) << process.error().message;
    ASSERT_TRUE((*process)->resume_all());  // PTRACE_LISTEN: still in the group-stop
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE((*process)->detach());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(process_state(pid), 'T');
  kill(pid, SIGCONT);
  const xprobe::testing::RunResult finished = xprobe::testing::finish_child(pipe_fds[0], pid);
  EXPECT_EQ(finished.exit_status, untraced.exit_status);
  EXPECT_EQ(finished.output, untraced.output);
}

}  // namespace
}  // namespace xprobe::target
