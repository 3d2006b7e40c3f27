// An i386 program (programs/cdecl32.c, gcc -m32) under the trap engine: the i386 ProbeArch
// (32-bit decoding, out-of-line slots below 4 GiB, emulated call rel32 of the PIC thunks),
// the cdecl ABI ($argN at 4*N(%esp) at entry, $retval in eax) and i386 register names.
// Expected values come from the program's own output, and from the kernel's uprobes where
// tracefs is available.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <map>
#include <thread>
#include <cstdio>
#include <sstream>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

struct ProgramAccount {
  std::vector<std::string> greet_names;
  std::vector<int> greet_times, greet_results;
  std::vector<std::array<int, 4>> sums;  // a, b, c, result
  std::vector<std::pair<int, int>> facts;  // n, result
};

ProgramAccount parse_account(const std::string& output) {
  ProgramAccount account;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    int a = 0, b = 0, c = 0, r = 0;
    const size_t name_at = line.find("name="), times_at = line.find(" times=");
    if (line.rfind("greet ", 0) == 0 && name_at != std::string::npos && times_at != std::string::npos &&
        std::sscanf(line.c_str() + times_at, " times=%d -> %d", &a, &r) == 2) {
      account.greet_names.push_back(line.substr(name_at + 5, times_at - name_at - 5));
      account.greet_times.push_back(a);
      account.greet_results.push_back(r);
    } else if (std::sscanf(line.c_str(), "sum3 %d %d %d -> %d", &a, &b, &c, &r) == 4) {
      account.sums.push_back({a, b, c, r});
    } else if (std::sscanf(line.c_str(), "fact %d -> %d", &a, &r) == 2) {
      account.facts.push_back({a, r});
    }
  }
  return account;
}

const std::vector<std::string> kCommand{CDECL32_PATH, "3"};

TEST(I386, EntryAndReturnProbesStringsAndArgNMatchWhatTheProgramPrints) {
  const RunResult untraced = run_untraced(kCommand);
  const ProgramAccount account = parse_account(untraced.output);
  ASSERT_EQ(account.greet_names.size(), 3u) << untraced.output;
  // "gamma ray" holds a space: the account's parser must have kept it.
  ASSERT_EQ(account.greet_names[2], "gamma ray");

  auto run = run_xprobe({"-e", "p:t32/greet greet name=+0($arg1):string times=$arg2:s32 first=+0(+4(%sp)):char",
                         "-e", "r:t32/greet_ret greet ret=$retval:s32 name=+0($arg1):string times=$arg2:s32",
                         "-e", "p:t32/sum sum3 a=$arg1:s32 b=$arg2:s32 c=$arg3:s32 s2=$stack2:s32 raw=+12(%sp):x32",
                         "-e", "r:t32/fact fact%return n=$arg1:s32 r=%ax:s32"},
                        kCommand);
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;

  auto greet = events_named(run.events, "greet");
  auto greet_ret = events_named(run.events, "greet_ret");
  ASSERT_EQ(greet.size(), 3u) << run.trace_text << run.diagnostics;
  ASSERT_EQ(greet_ret.size(), 3u) << run.trace_text << run.diagnostics;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(greet[i].arg("name"), "\"" + account.greet_names[i] + "\"");
    EXPECT_EQ(greet[i].arg("times"), std::to_string(account.greet_times[i]));
    EXPECT_EQ(greet[i].arg("first"), fmt::format("'{}'", account.greet_names[i][0]));
    EXPECT_EQ(greet[i].comm, "cdecl32");
    EXPECT_EQ(greet_ret[i].arg("ret"), std::to_string(account.greet_results[i]));
    EXPECT_EQ(greet_ret[i].arg("name"), "\"" + account.greet_names[i] + "\"");
    EXPECT_EQ(greet_ret[i].arg("times"), std::to_string(account.greet_times[i]));
    EXPECT_NE(greet_ret[i].location.find(" <- "), std::string::npos) << greet_ret[i].location;
  }
  auto sums = events_named(run.events, "sum");
  ASSERT_EQ(sums.size(), account.sums.size()) << run.trace_text;
  for (size_t i = 0; i < sums.size(); ++i) {
    EXPECT_EQ(sums[i].arg("a"), std::to_string(account.sums[i][0]));
    EXPECT_EQ(sums[i].arg("b"), std::to_string(account.sums[i][1]));
    EXPECT_EQ(sums[i].arg("c"), std::to_string(account.sums[i][2]));
    EXPECT_EQ(sums[i].arg("s2"), std::to_string(account.sums[i][1]));  // $stack2: 4-byte words above the return address
    EXPECT_EQ(sums[i].arg("raw"), fmt::format("{:#x}", static_cast<uint32_t>(account.sums[i][2])));
  }
  // fact recurses: one return event per frame, innermost first, n and the value of each.
  auto facts = events_named(run.events, "fact");
  size_t expected_frames = 0;
  for (const auto& [n, result] : account.facts) expected_frames += static_cast<size_t>(n);
  ASSERT_EQ(facts.size(), expected_frames) << run.trace_text;
  size_t at = 0;
  for (const auto& [n, result] : account.facts) {
    int value = 1;
    for (int k = 1; k <= n; ++k, ++at) {
      value *= k;
      EXPECT_EQ(facts[at].arg("n"), std::to_string(k)) << "frame " << at;
      EXPECT_EQ(facts[at].arg("r"), std::to_string(value)) << "frame " << at;
    }
    EXPECT_EQ(value, result);
  }
}

TEST(I386, TheJumpEngineRefusesAnI386ProcessAndAutoFallsBackToBreakpoints) {
  auto refused = run_xprobe({"--engine", "jump", "-e", "p:t32/sum sum3 a=$arg1:s32"}, kCommand);
  EXPECT_NE(refused.xprobe_status, 0);
  EXPECT_NE(refused.diagnostics.find("the process is i386"), std::string::npos) << refused.diagnostics;
  EXPECT_TRUE(events_named(refused.events, "sum").empty());

  const RunResult untraced = run_untraced(kCommand);
  auto automatic = run_xprobe({"-e", "p:t32/sum sum3 a=$arg1:s32"}, kCommand);
  EXPECT_EQ(automatic.program_output, untraced.output);
  EXPECT_EQ(automatic.xprobe_status, untraced.exit_status) << automatic.diagnostics;
  EXPECT_EQ(events_named(automatic.events, "sum").size(), 3u) << automatic.trace_text;
}

TEST(I386, AnX86_64ProgramThatExecsAnI386OneGetsTheProbesOfTheNewImage) {
  // /bin/sh (x86-64, with jump-optimized probes possible) execs the i386 program: the
  // definitions wait for its file, are parsed again for i386 at the exec and become breakpoints.
  const std::vector<std::string> command{"/bin/sh", "-c", fmt::format("exec {} 2", CDECL32_PATH)};
  const RunResult untraced = run_untraced(command);
  const ProgramAccount account = parse_account(untraced.output);
  ASSERT_EQ(account.sums.size(), 2u) << untraced.output;
  auto run = run_xprobe({"-e", fmt::format("p:t32/sum {}:sum3 a=$arg1:s32 b=$arg2:s32 c=%sp", CDECL32_PATH), "-e",
                         fmt::format("r:t32/greet_ret {}:greet ret=$retval:s32", CDECL32_PATH)},
                        command);
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  auto sums = events_named(run.events, "sum");
  auto greets = events_named(run.events, "greet_ret");
  ASSERT_EQ(sums.size(), 2u) << run.trace_text << run.diagnostics;
  ASSERT_EQ(greets.size(), 2u) << run.trace_text << run.diagnostics;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(sums[i].arg("a"), std::to_string(account.sums[i][0]));
    EXPECT_EQ(sums[i].arg("b"), std::to_string(account.sums[i][1]));
    // %sp of an i386 thread: a 32-bit stack address (the default type is the 4-byte word).
    EXPECT_LE(std::stoull(sums[i].arg("c"), nullptr, 16), 0xffffffffull) << sums[i].arg("c");
    EXPECT_EQ(greets[i].arg("ret"), std::to_string(account.greet_results[i]));
  }
}

TEST(I386, AttachToARunningI386ProgramAndDetachWhileItIsBusy) {
  const std::vector<std::string> command{CDECL32_PATH, "300", "2000"};
  const RunResult untraced = run_untraced(command);
  const std::string out = fmt::format("{}/cdecl32-attach-{}.out", ::testing::TempDir(), getpid());
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    execl(CDECL32_PATH, CDECL32_PATH, "300", "2000", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string events = fmt::format("{}/cdecl32-attach-{}.events", ::testing::TempDir(), getpid());
  unlink(events.c_str());
  const pid_t tracer = fork();
  if (tracer == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(XPROBE_PATH, XPROBE_PATH, "trace", "-p", std::to_string(child).c_str(), "-o", events.c_str(), "-e",
          "p:t32/sum sum3 a=$arg1:s32 b=$arg2:s32 c=$arg3:s32", "-e", "r:t32/sum_ret sum3 a=$arg1:s32 r=$retval:s32",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int waited = 0; waited < 2000 && count(parse_trace(read_text_file(events)), "sum_ret") < 5; ++waited)
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
  // Round i passes (i, -7i, 1000 + i) and gets 1000 - 5i back (sum3's own arithmetic).
  const auto traced = parse_trace(read_text_file(events));
  EXPECT_GE(count(traced, "sum_ret"), 5u);
  for (const auto& e : traced) {
    const int a = std::stoi(e.arg("a"));
    if (e.event == "sum") {
      EXPECT_EQ(e.arg("b"), std::to_string(-7 * a));
      EXPECT_EQ(e.arg("c"), std::to_string(1000 + a));
    } else {
      EXPECT_EQ(e.arg("r"), std::to_string(1000 - 5 * a));
    }
  }
  unlink(out.c_str());
  unlink(events.c_str());
}

TEST(I386, EightThreadsHittingTheSameEntryAndReturnProbes) {
  const RunResult untraced = run_untraced({THREADS32_PATH});
  auto run = run_xprobe({"-e", "p:t32/work work x=$arg1:s32", "-e", "r:t32/work_ret work x=$arg1:s32 r=$retval:s32"},
                        {THREADS32_PATH});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // threads.c: 8 threads call work(i + id) for i < 2000, and work(x) returns 7x + 1.
  EXPECT_EQ(count(run.events, "work"), 8u * 2000);
  auto returns = events_named(run.events, "work_ret");
  ASSERT_EQ(returns.size(), 8u * 2000) << run.diagnostics;
  std::map<pid_t, size_t> per_thread;
  for (const TraceEvent& e : returns) {
    ++per_thread[e.tid];
    EXPECT_EQ(std::stol(e.arg("r")), 7 * std::stol(e.arg("x")) + 1) << e.arg("x");
  }
  EXPECT_EQ(per_thread.size(), 8u);
  for (const auto& [tid, n] : per_thread) EXPECT_EQ(n, 2000u) << tid;
}

TEST(I386, SameEventsAndValuesAsTheKernelsUprobes) {
  const std::string bin = CDECL32_PATH;
  const auto at = [&](const char* symbol) { return fmt::format("{}:{:#x}", bin, file_offset_of(bin, symbol)); };
  const std::vector<std::string> definitions = {
      // No string through a pointer on the stack: a 64-bit kernel dereferences a 32-bit task's
      // memory 8 bytes at a time (+0(+4(%sp)) takes the next argument as the pointer's upper
      // half and faults), where xprobe reads the 4-byte pointer an i386 kernel would.
      fmt::format("p:xpt_oracle/greet {} times=+8(%sp):s32 c=+0(%sp):u8", at("greet")),
      fmt::format("p:xpt_oracle/sum {} a=+4(%sp):s32 b=+8(%sp):s32 c=+12(%sp):u32 ax=%ax:x32", at("sum3")),
      fmt::format("r:xpt_oracle/fact {} r=$retval:s32", at("fact")),
  };
  for (const auto& d : definitions) ASSERT_EQ(d.find(":0x0 "), std::string::npos) << "symbol not found: " << d;
  KernelRun kernel = run_under_kernel_uprobes(definitions, kCommand);
  if (!kernel.skip_reason.empty()) GTEST_SKIP() << kernel.skip_reason;

  std::vector<std::string> args;
  for (const auto& d : definitions) {
    args.push_back("-e");
    args.push_back(d);
  }
  TracedRun xprobe = run_xprobe(args, kCommand);
  ASSERT_EQ(xprobe.program_output, kernel.program_output);
  ASSERT_EQ(xprobe.xprobe_status, kernel.exit_status) << xprobe.diagnostics;
  ASSERT_EQ(kernel.events.size(), 3u * 2 + (3 + 4 + 5)) << "kernel events";
  ASSERT_EQ(xprobe.events.size(), kernel.events.size()) << xprobe.trace_text << xprobe.diagnostics;
  for (size_t i = 0; i < kernel.events.size(); ++i) {
    const TraceEvent& k = kernel.events[i];
    const TraceEvent& x = xprobe.events[i];
    EXPECT_EQ(x.event, k.event) << "event " << i;
    EXPECT_EQ(x.args, k.args) << "event " << i << " (" << k.event << ")";
    EXPECT_EQ(x.comm, k.comm) << "event " << i;
    EXPECT_EQ(x.location.find(" <- ") != std::string::npos, k.location.find(" <- ") != std::string::npos);
  }
}

}  // namespace
}  // namespace xprobe::testing
