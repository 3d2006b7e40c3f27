// The two engines side by side on a real program: every entry probe of fetch_args_test.cpp's
// kinds, once with breakpoints only (--engine trap) and once jump-optimized (--engine jump).
// The events must be the same, value for value, and the program's output untouched.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

const std::vector<std::string> kEntryProbes = {
    "-e", "p:t/many many_args a=$arg1:s64 b=$arg2:s64 f=$arg6:s64 g=$arg7:s64 h=$arg8:x64 s1=$stack1:s64 "
          "sp8=+8(%sp):s64 di=%di:s64 k=\\42:u32 ip=%ip",
    "-e", "p many_args",
    "-e", "p:t/rec take_record id=+0(%di):s32 flags=+4(%di):b3@0/32 mode=+4(%di):b5@3/32 name=+8(%di):string "
          "label=+0(+24(%di)):string values=+32(%di):s64[4] v3=+56(%di):u64 c=+8(%di):char",
    "-e", "p:t/str take_string s=+0(%di):string small=%si:s8 medium=%dx:s16 first=+0(%di):u8 xs=%si:x8 u=+0(%di):ustring",
    "-e", "p:t/bad keep_pointer s=+0(%di):string n=+0(%di):u64 deep=+0(+0(%di)):u32",
    "-e", "p:t/glob keep_pointer counter=@counter_global:s64 greeting=+0(@greeting_global):string who=$comm "
          "ret=+0(%sp):symbol imm=\\\"text\"",
    "-e", "p:t/in recurse depth=$arg1:s64 sp=%sp:x64",
};

std::vector<std::string> with_engine(const std::string& engine) {
  std::vector<std::string> args{"--engine", engine};
  args.insert(args.end(), kEntryProbes.begin(), kEntryProbes.end());
  return args;
}

// `xprobe trace ARGS...` in the background, its own output to /dev/null.
pid_t start_xprobe(const std::vector<std::string>& args) {
  std::vector<std::string> argv{XPROBE_PATH, "trace"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::vector<char*> raw;
    for (std::string& arg : argv) raw.push_back(arg.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  return pid;
}

// What must not depend on the engine: which events, in which order per event name, and every
// argument except the stack addresses (ASLR moves the stack between runs).
std::vector<std::string> comparable(const std::vector<TraceEvent>& events) {
  std::vector<std::string> out;
  for (const TraceEvent& e : events) {
    std::string line = e.comm + " " + e.event;
    for (const auto& [name, value] : e.args) {
      if (name == "sp" || name == "ip") continue;
      line += " " + name + "=" + value;
    }
    out.push_back(line);
  }
  std::stable_sort(out.begin(), out.end());
  return out;
}

TEST(Engines, JumpOptimizedProbesRecordWhatBreakpointsRecord) {
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  const TracedRun trap = run_xprobe(with_engine("trap"), {FETCHARGS_PATH, "3"});
  const TracedRun jump = run_xprobe(with_engine("jump"), {FETCHARGS_PATH, "3"});
  for (const TracedRun* run : {&trap, &jump}) {
    EXPECT_EQ(run->program_output, untraced.output);
    EXPECT_EQ(run->xprobe_status, untraced.exit_status) << run->diagnostics;
  }
  ASSERT_GT(trap.events.size(), 20u) << trap.trace_text << trap.diagnostics;
  EXPECT_EQ(comparable(jump.events), comparable(trap.events)) << jump.diagnostics;
  // The probed address is the same (the location column): the jump is at the function's start.
  for (const TraceEvent& e : jump.events) EXPECT_EQ(e.location.rfind("0x", 0), 0u);
  // ip is the probed address in both.
  for (const TracedRun* run : {&trap, &jump}) {
    for (const TraceEvent& e : events_named(run->events, "many")) EXPECT_EQ(e.arg("ip"), e.location);
  }
}

TEST(Engines, JsonOutputIsOneObjectPerLineFromBothEngines) {
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  for (const std::string engine : {"trap", "jump"}) {
    const std::string events = fmt::format("{}/json-{}-{}.events", ::testing::TempDir(), engine, getpid());
    const pid_t tracer = start_xprobe({"--engine", engine, "--format", "json", "-o", events, "-e",
                                        "p:t/str take_string s=+0(%di):string", "--", FETCHARGS_PATH, "3"});
    int status = 0;
    waitpid(tracer, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == untraced.exit_status) << status;
    std::istringstream lines(read_text_file(events));
    std::string line;
    int objects = 0;
    while (std::getline(lines, line)) {
      ASSERT_FALSE(line.empty()) << "a blank line in JSON lines output (" << engine << ")";
      EXPECT_EQ(line.front(), '{');
      EXPECT_EQ(line.back(), '}');
      EXPECT_NE(line.find("\"event\":\"t/str\""), std::string::npos) << line;
      ++objects;
    }
    EXPECT_EQ(objects, 3) << engine;
    unlink(events.c_str());
  }
}

TEST(Engines, JumpRefusesWhatItCannotProveWithTheReason) {
  const TracedRun run = run_xprobe({"--engine", "jump", "-e", "p:t/cs take_string cs=%cs:u16"}, {FETCHARGS_PATH, "3"});
  EXPECT_NE(run.xprobe_status, 0);
  EXPECT_NE(run.diagnostics.find("cannot be jump-optimized: argument cs: the trampoline does not save that register"),
            std::string::npos)
      << run.diagnostics;
  EXPECT_TRUE(run.program_output.empty()) << "refused before the program ran";
  const TracedRun middle = run_xprobe({"--engine", "jump", "-e", "p:t/mid take_string+4"}, {FETCHARGS_PATH, "3"});
  EXPECT_NE(middle.xprobe_status, 0);
  EXPECT_NE(middle.diagnostics.find("not at a function's first instruction"), std::string::npos) << middle.diagnostics;
}

TEST(Engines, ReturnProbesRecordWhatBreakpointsRecord) {
  const std::vector<std::string> probes = {
      "-e", "r:t/out recurse ret=$retval:s64 depth=$arg1:s64",
      "-e", "r:t/str take_string ret=$retval:s64 s=+0($arg1):string small=$arg2:s8",
      "-e", "r:t/many many_args ret=$retval:s64 a=$arg1:s64 g=$arg7:s64 h=$arg8:x64",
      "-e", "p:t/in recurse depth=$arg1:s64"};
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  std::vector<std::string> trap_args{"--engine", "trap"}, jump_args{"--engine", "jump"};
  trap_args.insert(trap_args.end(), probes.begin(), probes.end());
  jump_args.insert(jump_args.end(), probes.begin(), probes.end());
  const TracedRun trap = run_xprobe(trap_args, {FETCHARGS_PATH, "3"});
  const TracedRun jump = run_xprobe(jump_args, {FETCHARGS_PATH, "3"});
  for (const TracedRun* run : {&trap, &jump}) {
    EXPECT_EQ(run->program_output, untraced.output);
    EXPECT_EQ(run->xprobe_status, untraced.exit_status) << run->diagnostics;
  }
  ASSERT_GT(count(trap.events, "out"), 3u) << trap.trace_text << trap.diagnostics;
  EXPECT_EQ(count(trap.events, "str"), 3u);
  EXPECT_EQ(comparable(jump.events), comparable(trap.events)) << jump.diagnostics;
  // The return sites in fetchargs are all patched (no C++ exception tables, no rel8 branch
  // into them): nothing is watched by a breakpoint.
  EXPECT_EQ(jump.diagnostics.find("cannot be jump-optimized"), std::string::npos) << jump.diagnostics;
  // The location column is (return address <- function) in both.
  for (const TracedRun* run : {&trap, &jump})
    for (const TraceEvent& e : events_named(run->events, "str")) EXPECT_NE(e.location.find(" <- 0x"), std::string::npos) << e.location;
}

TEST(Engines, AReturnSiteWithALandingPadInItsBytesIsWatchedOrMissed) {
  // thrower.cpp: outer() catches what middle() lets through; the catch's landing pad follows
  // the call of middle within 5 bytes, so that return site cannot become a jump.
  const std::string program = e2e_program("thrower");
  const RunResult untraced = run_untraced({program});
  const std::vector<std::string> probes = {"-e", "r:t/middle_ret middle ret=$retval:s32", "-e", "r:t/outer_ret outer ret=$retval:s32"};
  std::vector<std::string> jump{"--engine", "jump", "--summary"}, automatic{"--summary"};
  jump.insert(jump.end(), probes.begin(), probes.end());
  automatic.insert(automatic.end(), probes.begin(), probes.end());
  const TracedRun insisting = run_xprobe(jump, {program});
  const TracedRun mixed = run_xprobe(automatic, {program});
  for (const TracedRun* run : {&insisting, &mixed}) {
    EXPECT_EQ(run->program_output, untraced.output) << run->diagnostics;
    EXPECT_EQ(run->xprobe_status, untraced.exit_status) << run->diagnostics;
    EXPECT_EQ(count(run->events, "outer_ret"), 40u) << run->diagnostics;
  }
  // --engine jump plants no breakpoint: those returns are missed, and said so.
  EXPECT_NE(insisting.diagnostics.find("landing pad"), std::string::npos) << insisting.diagnostics;
  EXPECT_EQ(count(insisting.events, "middle_ret"), 0u);
  // auto watches that site with a breakpoint: every return is there.
  EXPECT_EQ(count(mixed.events, "middle_ret"), 30u) << mixed.diagnostics;
}

TEST(Engines, AProgramWithItsOwnSigurgHandlerIsNeverSentOne) {
  // The agent asks the tracer for a new return site with SIGURG, unless the program handles
  // it: then through a list the tracer reads on its timer (the first returns are missed).
  const RunResult untraced = run_untraced({URGENT_PATH});
  ASSERT_NE(untraced.output.find("urgent=1"), std::string::npos) << untraced.output;
  const TracedRun run = run_xprobe({"--engine", "jump", "-e", "r:t/w work ret=$retval:s64"}, {URGENT_PATH});
  EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  const size_t returns = count(run.events, "w");
  EXPECT_GT(returns, 150u) << run.diagnostics;
  EXPECT_LE(returns, 200u);
}

TEST(Engines, AutoMixesJumpsAndBreakpointsOnOneFunction) {
  // An entry probe with an argument only a breakpoint can fetch (%cs) and a return probe on
  // one function: the return probe shares the entry's breakpoint; another function's entry
  // probe is a jump.
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  const TracedRun run = run_xprobe({"-e", "p:t/in recurse depth=$arg1:s64 cs=%cs:u16", "-e", "r:t/out recurse ret=$retval:s64",
                                    "-e", "p:t/str take_string s=+0(%di):string"},
                                   {FETCHARGS_PATH, "3"});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_EQ(count(run.events, "in"), count(run.events, "out"));
  EXPECT_GT(count(run.events, "in"), 0u);
  EXPECT_EQ(count(run.events, "str"), 3u) << run.trace_text;
}

TEST(Engines, EveryJumpEventCarriesTheIdOfTheThreadThatMadeIt) {
  // tid_stamps.c passes its own thread id: threads started one after another on the same
  // thread pointer, a vfork child on its parent's, a fork child (not followed: no event).
  // The agent remembers thread ids per thread pointer; none may be another thread's.
  const std::string program = e2e_program("tid_stamps");
  const RunResult untraced = run_untraced({program});
  const TracedRun run = run_xprobe({"--engine", "jump", "--summary", "-e", "p:t/stamp stamp t=%di:s64"}, {program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  // main 1, 6 threads 2 each, the vfork child 2, main 2 more.
  ASSERT_EQ(run.events.size(), 17u) << run.trace_text << run.diagnostics;
  std::set<pid_t> tids;
  for (const auto& event : run.events) {
    EXPECT_EQ(std::to_string(event.tid), event.arg("t")) << run.trace_text;
    tids.insert(event.tid);
  }
  EXPECT_EQ(tids.size(), 8u) << run.trace_text;
  EXPECT_EQ(run.diagnostics.find("dropped"), std::string::npos) << run.diagnostics;
}

TEST(Engines, ALibraryLoadedWhileAnotherThreadRunsGetsJumps) {
  const RunResult untraced = run_untraced({LOADER_PATH, PLUGIN_PATH, "busy"});
  // A second thread spins while the plugin arrives; the plugin's probe is written with every
  // thread stopped for the moment, then the spinner runs on.
  const TracedRun run = run_xprobe({"--engine", "jump", "--summary", "-e", "p:t/plugin libplugin.so:plugin_compute x=%di:s32"},
                                   {LOADER_PATH, PLUGIN_PATH, "busy"});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  const auto plugin = events_named(run.events, "plugin");
  ASSERT_EQ(plugin.size(), 4u) << run.diagnostics;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(plugin[static_cast<size_t>(i)].arg("x"), std::to_string(i));
  EXPECT_EQ(run.diagnostics.find("dropped"), std::string::npos) << run.diagnostics;
}

TEST(Engines, AProgramThatSandboxesItselfGetsBreakpointsFromThenOn) {
  // self_sandbox.c kills itself (SIGSYS) on gettid and process_vm_readv once its filter is in:
  // the agent must not run in it after that moment.
  const RunResult untraced = run_untraced({SELF_SANDBOX_PATH});
  ASSERT_EQ(untraced.exit_status, 0);
  const TracedRun run = run_xprobe({"-e", "p:t/work work x=%di:s32 label=+0(%si):string"}, {SELF_SANDBOX_PATH});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  const auto work = events_named(run.events, "work");
  ASSERT_EQ(work.size(), 3u) << run.trace_text << run.diagnostics;
  EXPECT_EQ(work[0].arg("label"), "\"before\"");
  EXPECT_EQ(work[1].arg("label"), "\"after\"");
  EXPECT_EQ(work[2].arg("x"), "3");
  EXPECT_NE(run.diagnostics.find("seccomp"), std::string::npos) << run.diagnostics;
}

// Mapping start -> {permissions, Rss in kB} of a process.
std::map<uint64_t, std::pair<std::string, long>> mappings(pid_t pid) {
  std::map<uint64_t, std::pair<std::string, long>> out;
  std::ifstream smaps(fmt::format("/proc/{}/smaps", pid));
  std::string line;
  uint64_t current = 0;
  while (std::getline(smaps, line)) {
    std::istringstream fields(line);
    std::string first, second;
    fields >> first >> second;
    if (first == "Rss:") {
      out[current].second = std::stol(second);
    } else if (first.find('-') != std::string::npos && second.size() == 4) {
      current = std::stoull(first.substr(0, first.find('-')), nullptr, 16);
      out[current] = {second, 0};
    }
  }
  return out;
}

uint8_t code_byte(pid_t pid, uint64_t address) {
  uint8_t byte = 0;
  const int fd = open(fmt::format("/proc/{}/mem", pid).c_str(), O_RDONLY);
  if (fd >= 0) {
    (void)pread(fd, &byte, 1, static_cast<off_t>(address));
    close(fd);
  }
  return byte;
}

TEST(Engines, DetachingFromJumpsRestoresTheCodeAndGivesTheRingBack) {
  const std::string program = e2e_program("ticker");
  const RunResult untraced = run_untraced({program, "600"});
  const std::string out = fmt::format("{}/ticker-jump-{}.out", ::testing::TempDir(), getpid());
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    execl(program.c_str(), program.c_str(), "600", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t tick = symbol_address(child, program, "tick");
  const uint8_t original = code_byte(child, tick);
  const auto before = mappings(child);
  const std::string events = fmt::format("{}/ticker-jump-{}.events", ::testing::TempDir(), getpid());
  unlink(events.c_str());
  const pid_t tracer = start_xprobe({"--engine", "jump", "-p", std::to_string(child), "-o", events, "-e", "p:t/tick tick x=%di:s64"});
  bool jumped = false;
  for (int waited = 0; waited < 2000 && count(parse_trace(read_text_file(events)), "tick") < 5; ++waited) {
    jumped = jumped || code_byte(child, tick) == 0xe9;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  jumped = jumped || code_byte(child, tick) == 0xe9;
  EXPECT_TRUE(jumped) << "the probe was not a jump";
  kill(tracer, SIGINT);
  int tracer_status = 0;
  waitpid(tracer, &tracer_status, 0);
  EXPECT_TRUE(WIFEXITED(tracer_status) && WEXITSTATUS(tracer_status) == 0) << tracer_status;
  EXPECT_EQ(code_byte(child, tick), original);
  // What the engine mapped stays (a thread could still be in a trampoline), but the ring's
  // pages are given back.
  const auto after = mappings(child);
  int added_writable = 0;
  for (const auto& [start, mapping] : after) {
    if (before.count(start) || mapping.first.rfind("rw", 0) != 0) continue;
    ++added_writable;
    EXPECT_LE(mapping.second, 8) << "kB still resident in the mapping at " << std::hex << start;
  }
  EXPECT_GE(added_writable, 1) << "no ring found";
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the program did not survive the detach: " << status;
  EXPECT_EQ(WEXITSTATUS(status), untraced.exit_status);
  EXPECT_EQ(read_text_file(out), untraced.output);
  EXPECT_GE(count(parse_trace(read_text_file(events)), "tick"), 5u);
}

TEST(Engines, AProgramInAPidNamespaceIsNamedAndReadAsWeSeeIt) {
  if (access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "no unshare";
  const std::string program = e2e_program("ticker");
  const pid_t launcher = fork();
  if (launcher == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execl("/usr/bin/unshare", "unshare", "--pid", "--fork", "--mount-proc", program.c_str(), "400", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The ticker is unshare's child; in its namespace it is pid 1.
  pid_t ticker = 0;
  for (int i = 0; i < 200 && ticker == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::ifstream children(fmt::format("/proc/{}/task/{}/children", launcher, launcher));
    children >> ticker;
  }
  ASSERT_NE(ticker, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string events = fmt::format("{}/ticker-pidns-{}.events", ::testing::TempDir(), getpid());
  const pid_t tracer = start_xprobe({"--engine", "jump", "-p", std::to_string(ticker), "-o", events, "-e",
                                      "p:t/tick tick x=%di:s64 ret=+0(%sp):x64"});
  for (int waited = 0; waited < 2000 && count(parse_trace(read_text_file(events)), "tick") < 5; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(tracer, SIGINT);
  int status = 0;
  waitpid(tracer, &status, 0);
  waitpid(launcher, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const auto ticks = events_named(parse_trace(read_text_file(events)), "tick");
  ASSERT_GE(ticks.size(), 5u);
  for (const TraceEvent& e : ticks) {
    EXPECT_EQ(e.tid, ticker);  // not 1, the namespace's name for it
    EXPECT_EQ(e.comm, "ticker");
    EXPECT_NE(e.arg("ret"), "0x0") << "the agent read its own memory with the wrong pid";
  }
}

}  // namespace
}  // namespace xprobe::testing
