// fork, exec, dlopen, attach and detach, and refusals: xprobe's life around the program's.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

TEST(Lifecycle, ForkedChildCarriesNoProbe) {
  const std::string program = e2e_program("forker");
  const RunResult untraced = run_untraced({program});
  auto run = run_xprobe({"-e", "p:t/work work x=%di:s32"}, {program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // forker.c: the parent calls work() 5 times before and 5 after the fork; the child 5 times
  // with its breakpoints removed: no event from it, and it exits 7 as untraced.
  EXPECT_EQ(count(run.events, "work"), 10u) << run.trace_text;
  for (const auto& e : run.events) EXPECT_EQ(e.tid, run.events.front().tid);
}

TEST(Lifecycle, ProbesAreResolvedAgainAfterExec) {
  const std::string program = e2e_program("execer");
  const RunResult untraced = run_untraced({program});
  auto run = run_xprobe({"-e", "p:t/work work x=%di:s32"}, {program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, 4) << run.diagnostics;
  // execer.c: work(1) before the exec, work(2) and work(3) in the new image.
  ASSERT_EQ(count(run.events, "work"), 3u) << run.trace_text << run.diagnostics;
  EXPECT_EQ(run.events[0].arg("x"), "1");
  EXPECT_EQ(run.events[1].arg("x"), "2");
  EXPECT_EQ(run.events[2].arg("x"), "3");
}

TEST(Lifecycle, LibraryLoadedByDlopenGetsItsProbes) {
  const RunResult untraced = run_untraced({LOADER_PATH, PLUGIN_PATH});
  auto run = run_xprobe({"-e", "p:t/plugin libplugin.so:plugin_compute x=%di:s32",
                         "-e", "r:t/plugin_ret libplugin.so:plugin_compute ret=$retval:s32"},
                        {LOADER_PATH, PLUGIN_PATH});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  ASSERT_EQ(count(run.events, "plugin"), 4u) << run.trace_text << run.diagnostics;
  ASSERT_EQ(count(run.events, "plugin_ret"), 4u) << run.trace_text;
  // loader.c calls plugin_compute(0..3) = x*x+1.
  int k = 0;
  for (const auto& e : run.events)
    if (e.event == "plugin_ret") {
      EXPECT_EQ(e.arg("ret"), std::to_string(k * k + 1)) << k;
      ++k;
    }
}

TEST(Lifecycle, AttachToABusyProcessAndDetach) {
  const std::string program = e2e_program("ticker");
  const RunResult untraced = run_untraced({program, "1000"});
  // Start the program on its own, with its stdout in a file.
  const std::string out = fmt::format("{}/ticker-attach-{}.out", ::testing::TempDir(), getpid());
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    execl(program.c_str(), program.c_str(), "1000", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string events = fmt::format("{}/ticker-attach-{}.events", ::testing::TempDir(), getpid());
  unlink(events.c_str());  // a stale file from an earlier run would end the wait below at once
  const pid_t tracer = fork();
  if (tracer == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(XPROBE_PATH, XPROBE_PATH, "trace", "-p", std::to_string(child).c_str(), "-o", events.c_str(), "-e",
          "p:t/tick tick x=%di:s64", "-e", "r:t/tick_ret tick ret=$retval:s64", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Detach while the program is busy: as soon as events flow (or after 20 s at most).
  for (int waited = 0; waited < 2000 && count(parse_trace(read_text_file(events)), "tick") < 5; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(tracer, SIGINT);
  int tracer_status = 0;
  waitpid(tracer, &tracer_status, 0);
  EXPECT_TRUE(WIFEXITED(tracer_status) && WEXITSTATUS(tracer_status) == 0) << tracer_status;
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the program did not survive the detach: " << status;
  EXPECT_EQ(WEXITSTATUS(status), untraced.exit_status);
  EXPECT_EQ(read_text_file(out), untraced.output);
  const auto traced = parse_trace(read_text_file(events));
  EXPECT_GT(count(traced, "tick"), 0u);
  // Every return event matches x + 1 of its entry: nothing was misreported across the detach.
  for (const auto& e : traced)
    if (e.event == "tick_ret") {
      EXPECT_GT(std::stol(e.arg("ret")), 0);
    }
}

TEST(Lifecycle, RefusedProbeStopsBeforeAnythingIsPlanted) {
  auto run = run_xprobe({"-e", "p:t/ok accepted_function", "-e", "p:t/bad privileged_function+1"}, {PROBE_POINTS_PATH});
  EXPECT_EQ(run.xprobe_status, 1);
  EXPECT_NE(run.diagnostics.find("Could not insert probe at address 0x"), std::string::npos) << run.diagnostics;
  EXPECT_NE(run.diagnostics.find("cannot probe the instruction f4"), std::string::npos) << run.diagnostics;
  EXPECT_TRUE(run.events.empty());
  EXPECT_TRUE(run.program_output.empty());  // the program never ran
}

TEST(Lifecycle, UnknownInstructionIsRefusedInTheSeedsWords) {
  auto run = run_xprobe({"-e", "p unknown_instruction_function+2"}, {PROBE_POINTS_PATH});
  EXPECT_EQ(run.xprobe_status, 1);
  EXPECT_NE(run.diagnostics.find("due to: Unknown instruction: 06 48 8d 15 db ff ff ff c3"), std::string::npos)
      << run.diagnostics;
}

TEST(Lifecycle, MalformedDefinitionShowsACaret) {
  auto run = run_xprobe({"-e", "p:t/x many_args a=%nosuchreg"}, {FETCHARGS_PATH});
  EXPECT_EQ(run.xprobe_status, 2);
  // The kernel's error_log shape: message, "  Command: <definition>", caret under the error.
  const std::string command_line = "  Command: p:t/x many_args a=%nosuchreg\n";
  const size_t at = run.diagnostics.find(command_line);
  ASSERT_NE(at, std::string::npos) << run.diagnostics;
  const std::string caret_line = run.diagnostics.substr(at + command_line.size());
  EXPECT_EQ(caret_line.find('^'), std::string("  Command: p:t/x many_args a=").size()) << run.diagnostics;
  EXPECT_TRUE(run.program_output.empty());
}

TEST(Lifecycle, ClearErrorsForMissingThings) {
  auto no_program = run_xprobe({"-e", "p main"}, {"/nonexistent/program"});
  EXPECT_NE(no_program.xprobe_status, 0);
  EXPECT_NE(no_program.diagnostics.find("/nonexistent/program"), std::string::npos) << no_program.diagnostics;
  auto no_symbol = run_xprobe({"-e", "p no_such_function"}, {FETCHARGS_PATH});
  EXPECT_EQ(no_symbol.xprobe_status, 1);
  EXPECT_NE(no_symbol.diagnostics.find("no function named 'no_such_function'"), std::string::npos)
      << no_symbol.diagnostics;
  auto no_pid = run_xprobe({"-p", "999999999", "-e", "p main"}, {});
  EXPECT_NE(no_pid.xprobe_status, 0);
  EXPECT_NE(no_pid.diagnostics.find("999999999"), std::string::npos) << no_pid.diagnostics;
}

}  // namespace
}  // namespace xprobe::testing

namespace xprobe::testing {
namespace {

TEST(Lifecycle, FollowForkTracesTheChildToo) {
  const std::string program = e2e_program("forker");
  const RunResult untraced = run_untraced({program});
  auto run = run_xprobe({"--follow-fork", "-e", "p:t/work work x=%di:s32"}, {program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // forker.c: 5 + 5 calls in the parent, 5 in the child (x = 0..4 each time).
  ASSERT_EQ(run.events.size(), 15u) << run.trace_text << run.diagnostics;
  std::map<pid_t, std::vector<std::string>> by_tid;
  for (const auto& e : run.events) by_tid[e.tid].push_back(e.arg("x"));
  ASSERT_EQ(by_tid.size(), 2u);
  const std::vector<std::string> once{"0", "1", "2", "3", "4"};
  const std::vector<std::string> twice{"0", "1", "2", "3", "4", "0", "1", "2", "3", "4"};
  const pid_t parent = run.events.front().tid;
  EXPECT_EQ(by_tid[parent], twice);
  for (const auto& [tid, values] : by_tid)
    if (tid != parent) {
      EXPECT_EQ(values, once);
    }
}

// A SIGTERM that reaches xprobe after tracing ended (its profile is out, it is on its way out)
// must not replace the program's exit status: the signal is sent the moment the profile's
// last line appears on xprobe's stderr.
TEST(Lifecycle, ASigtermAfterTheProfileKeepsTheProgramsExitStatus) {
  const std::string program = e2e_program("thrower");  // exits with status 5
  for (int round = 0; round < 5; ++round) {
    int err[2];
    ASSERT_EQ(pipe(err), 0);
    const pid_t xprobe = fork();
    if (xprobe == 0) {
      dup2(err[1], 2);
      const int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      close(err[0]);
      execl(XPROBE_PATH, XPROBE_PATH, "trace", "--summary", "-o", "/dev/null", "-e", "p:t/outer outer", "--",
            program.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(err[1]);
    std::string seen;
    char buffer[4096];
    bool signalled = false;
    for (;;) {
      const ssize_t n = read(err[0], buffer, sizeof buffer);
      if (n <= 0) break;
      seen.append(buffer, static_cast<size_t>(n));
      if (!signalled && seen.find("\ntotal ") != std::string::npos) {
        kill(xprobe, SIGTERM);
        signalled = true;
      }
    }
    close(err[0]);
    int status = 0;
    ASSERT_EQ(waitpid(xprobe, &status, 0), xprobe);
    EXPECT_TRUE(signalled) << seen;
    ASSERT_TRUE(WIFEXITED(status)) << "xprobe was killed by signal " << WTERMSIG(status) << "\n" << seen;
    EXPECT_EQ(WEXITSTATUS(status), 5) << seen;
  }
}

// How many descriptors process `pid` has open, from /proc/PID/fd.
size_t open_descriptors(pid_t pid) {
  DIR* dir = opendir(fmt::format("/proc/{}/fd", pid).c_str());
  if (dir == nullptr) return 0;
  size_t count = 0;
  while (const dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  closedir(dir);
  return count;
}

// Reads `from` until `line` has arrived (or the other end closed); what came.
std::string read_until(int from, const std::string& line) {
  std::string seen;
  char buffer[256];
  while (seen.find(line) == std::string::npos) {
    const ssize_t n = read(from, buffer, sizeof buffer);
    if (n <= 0) break;
    seen.append(buffer, static_cast<size_t>(n));
  }
  return seen;
}

struct DescriptorCounts {
  size_t before = 0;  // xprobe's open descriptors once the program runs, before its threads
  size_t after = 0;   // once 2,000 threads came and went
  int status = -1;
  std::string output;
  size_t events = 0;
};

// Traces thread_churn 2000 with `engine` and counts xprobe's descriptors in both moments the
// program waits in (see programs/thread_churn.c).
DescriptorCounts count_descriptors_around_2000_threads(const std::string& engine) {
  DescriptorCounts counts;
  const std::string trace_file = fmt::format("/tmp/xprobe-fd-leak-{}-{}.trace", getpid(), engine);
  int to_program[2], from_program[2];
  if (pipe(to_program) != 0 || pipe(from_program) != 0) return counts;
  const pid_t xprobe = fork();
  if (xprobe == 0) {
    dup2(to_program[0], 0);
    dup2(from_program[1], 1);
    for (int fd : {to_program[0], to_program[1], from_program[0], from_program[1]}) close(fd);
    execl(XPROBE_PATH, XPROBE_PATH, "trace", "--engine", engine.c_str(), "-o", trace_file.c_str(), "-e",
          "p:t/work work i=%di:s32", "--", THREAD_CHURN_PATH, "2000", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_program[0]);
  close(from_program[1]);
  counts.output = read_until(from_program[0], "ready\n");
  counts.before = open_descriptors(xprobe);
  const char go = 'g';
  if (write(to_program[1], &go, 1) == 1) {
    counts.output += read_until(from_program[0], "joined\n");
    // pthread_join returns when the kernel clears the thread's tid, a moment before xprobe
    // reaps its exit: give the last exits a few seconds to arrive.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
      counts.after = open_descriptors(xprobe);
      if (counts.after == counts.before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    if (write(to_program[1], &go, 1) != 1) counts.after = 0;
  }
  close(to_program[1]);
  close(from_program[0]);
  int status = 0;
  if (waitpid(xprobe, &status, 0) == xprobe && WIFEXITED(status)) counts.status = WEXITSTATUS(status);
  counts.events = count(parse_trace(read_text_file(trace_file)), "work");
  std::remove(trace_file.c_str());
  return counts;
}

// Every thread that hits a breakpoint gets a descriptor of xprobe's (its /proc/TID/stat, read
// for the CPU column); a thread that is gone must not keep it, or a long trace of a program
// that creates threads runs out of descriptors.
TEST(Lifecycle, TwoThousandThreadsCreatedAndJoinedLeaveXprobesDescriptorCountWhereItWas) {
  for (const std::string engine : {"trap", "auto"}) {
    SCOPED_TRACE("--engine " + engine);
    const DescriptorCounts counts = count_descriptors_around_2000_threads(engine);
    EXPECT_EQ(counts.status, 0) << counts.output;
    EXPECT_EQ(counts.output, "ready\njoined\n");
    EXPECT_EQ(counts.events, 2001u);  // the main thread's work(-1) and one per thread
    EXPECT_GT(counts.before, 3u);     // stdio, the trace file, the process's memory at least
    EXPECT_EQ(counts.after, counts.before);
  }
}

}  // namespace
}  // namespace xprobe::testing
