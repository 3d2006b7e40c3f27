// USDT markers: their arguments, their semaphores (raised while traced, back to 0 after a
// detach, read from the process's memory), and the real python3.11's markers against the
// script's own record of its calls (sys.setprofile).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "source_support.h"
#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::string orders(int level) { return fmt::format("{}/orders_O{}", ORDERS_DIR, level); }

pid_t spawn(const std::vector<std::string>& argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

uint16_t read_u16(pid_t pid, uint64_t address) {
  uint16_t value = 0xffff;
  const int fd = open(fmt::format("/proc/{}/mem", pid).c_str(), O_RDONLY);
  if (fd >= 0) {
    if (pread(fd, &value, sizeof value, static_cast<off_t>(address)) != sizeof value) value = 0xffff;
    close(fd);
  }
  return value;
}

bool wait_for_text(const std::string& path, const std::string& text, int seconds) {
  for (int i = 0; i < seconds * 50; ++i) {
    if (read_text_file(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The marker's arguments, with the note's sizes as types, are what the program passed.
TEST(Usdt, MarkerArgumentsAreWhatTheProgramPassed) {
  for (int level : {0, 2}) {
    const std::string binary = orders(level);
    const TracedRun run = run_xprobe(
        {"-e", fmt::format("p {}:%sdt_orders:handled len=$arg1 $arg2 customer=+0($arg3):string", binary)}, {binary, "3"});
    ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
    const auto events = events_named(run.events, "handled");
    ASSERT_EQ(events.size(), 3u) << run.trace_text;
    const char* customers[] = {"\"ada\"", "\"brian\"", "\"carol\""};
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].arg("len"), std::to_string(100 + i));
      EXPECT_EQ(events[i].arg("arg2"), std::to_string(i));
      EXPECT_EQ(events[i].arg("customer"), customers[i]);
    }
  }
}

// A marker behind a semaphore fires only while traced: the program prints nothing for it,
// so its events' sums are checked against the program's own "sum=" lines.
TEST(Usdt, GuardedMarkerFiresWhileTracedWithThePrintedValues) {
  const std::string binary = orders(2);
  const TracedRun run = run_xprobe({"-e", fmt::format("p {}:sdt_orders:guarded round=$arg1 sum=$arg2", binary)}, {binary, "3"});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  const auto events = events_named(run.events, "guarded");
  ASSERT_EQ(events.size(), 3u) << run.trace_text;
  for (size_t i = 0; i < events.size(); ++i)
    EXPECT_NE(run.program_output.find(fmt::format("handled {} len={} kind={} sum={}\n", i, 100 + i, 7 + i, events[i].arg("sum"))),
              std::string::npos)
        << events[i].arg("sum") << "\n" << run.program_output;
}

// Attached to a running program: its semaphore is 1 while the probe is in and 0 after the
// detach (SIGINT), the program still running; the kernel's PATH:OFFSET(REF_CTR_OFFSET) form
// does the same.
TEST(Usdt, SemaphoreIsRaisedWhileAttachedAndBackToZeroAfterDetach) {
  const std::string binary = orders(0);
  // The marker's pc and semaphore from readelf (independent of xprobe), as file offsets.
  const std::string notes = shell_output("readelf -n " + binary);
  unsigned long pc = 0, semaphore_link = 0;
  const size_t at = notes.find("Name: guarded");
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(std::sscanf(notes.c_str() + notes.find("Location:", at), "Location: %lx, Base: %*x, Semaphore: %lx", &pc,
                        &semaphore_link), 2);
  const std::string kernel_form = fmt::format("p:k/guarded {}:{:#x}({:#x})", binary, file_offset_of_address(binary, pc),
                                              file_offset_of_address(binary, semaphore_link));
  for (const std::string& definition : {fmt::format("p:u/guarded {}:%sdt_orders:guarded", binary), kernel_form}) {
    SCOPED_TRACE(definition);
    const pid_t program = spawn({binary, "100000", "slow"});
    ASSERT_GT(program, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const uint64_t semaphore = symbol_address(program, binary, "orders_guarded_semaphore");
    ASSERT_NE(semaphore, 0u);
    EXPECT_EQ(read_u16(program, semaphore), 0);
    const std::string events = fmt::format("/tmp/xprobe-usdt-{}.trace", program);
    const pid_t tracer = spawn({XPROBE_PATH, "trace", "-p", std::to_string(program), "-o", events, "-e", definition});
    EXPECT_TRUE(wait_for_text(events, "guarded:", 20)) << read_text_file(events);
    EXPECT_EQ(read_u16(program, semaphore), 1);
    kill(tracer, SIGINT);
    int status = 0;
    waitpid(tracer, &status, 0);
    EXPECT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(kill(program, 0), 0) << "the program must outlive the detach";
    EXPECT_EQ(read_u16(program, semaphore), 0);
    kill(program, SIGKILL);
    waitpid(program, &status, 0);
    unlink(events.c_str());
  }
}

// python3.11's function__return marker against the script's own sys.setprofile record:
// the same (file, function, line) sequence for the script's functions.
TEST(Usdt, Python311ReturnsEqualTheScriptsOwnProfile) {
  const std::string python = "/usr/bin/python3.11";
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << python;
  char directory[] = "/tmp/xprobe-python-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string script = std::string(directory) + "/calls.py";
  const std::string record = std::string(directory) + "/record.txt";
  {
    std::ofstream out(script);
    out << "import sys\n"
           "seen = []\n"
           "def profile(frame, event, arg):\n"
           "    if event == 'return' and frame.f_code.co_filename == __file__:\n"
           "        seen.append(f'{frame.f_code.co_filename} {frame.f_code.co_name} {frame.f_lineno}')\n"
           "sys.setprofile(profile)\n"
           "def leaf(x):\n"
           "    return x * 2\n"
           "def middle(x):\n"
           "    if x % 2:\n"
           "        return leaf(x) + 1\n"
           "    return leaf(x)\n"
           "class Box:\n"
           "    def __init__(self, v):\n"
           "        self.v = middle(v)\n"
           "def main():\n"
           "    return [Box(i).v for i in range(5)]\n"
           "main()\n"
           "sys.setprofile(None)\n"
           "open(sys.argv[1], 'w').write('\\n'.join(seen) + '\\n')\n";
  }
  const TracedRun run = run_xprobe(
      {"-e", fmt::format("p:py/ret {}:%sdt_python:function__return file=+0($arg1):string fn=+0($arg2):string line=$arg3", python)},
      {python, script, record});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  std::string traced;
  for (const TraceEvent& event : events_named(run.events, "ret")) {
    std::string file = event.arg("file"), function = event.arg("fn");
    file = file.substr(1, file.size() - 2);
    function = function.substr(1, function.size() - 2);
    if (file != script) continue;
    if (function == "profile") continue;  // the profiler itself is not profiled
    traced += fmt::format("{} {} {}\n", file, function, event.arg("line"));
  }
  std::string recorded = read_text_file(record);
  // The record stops at setprofile(None), before <module> returns (the marker sees that too).
  EXPECT_GT(recorded.size(), 0u);
  EXPECT_EQ(traced.substr(0, recorded.size()), recorded) << "traced:\n" << traced << "\nrecorded:\n" << recorded;
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace xprobe::testing
