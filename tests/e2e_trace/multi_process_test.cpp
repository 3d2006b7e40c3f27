// One xprobe session on several processes (`-p` given several times): three copies of
// programs/multi_calls.c, each told by the test what to do and answering when done, so the
// test knows every call each process made while traced. The oracles are the programs' own
// records (a traced run prints what an untraced one prints, and says how many calls it made)
// and their pids (every event carries its own process's tid, as ftrace does). One process
// exits while the others go on; definitions added live (through `xprobe ctl` and through the
// tracefs-compatible mount's echo) go in in every process still traced: one for the program
// at once, one for a library no process has loaded yet in each that loads it later (and with
// their return values, the functions' own results); the profile's counts are summed over the processes; xprobe
// ends by itself when the last one is gone. A -p that cannot be attached is named and leaves
// the others as they were; SIGINT lets every process run on untraced.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

constexpr int kCalls = 20;  // multi_calls.c's calls per "go"

std::string work_definition() {
  return fmt::format("p:xprobe_multi/work {}:multi_work id=%di:s32 call=%si:s32", MULTI_CALLS_PATH);
}
// Added live for an object every process maps already: it goes in in all of them at once.
std::string return_definition() {
  return fmt::format("r:xprobe_multi/work_ret {}:multi_work%return ret=$retval:s64", MULTI_CALLS_PATH);
}
// What multi_work(id, call) returns (programs/multi_calls.c).
long work_result(int id, int call) { return (static_cast<long>(id) * 1000 + call) * 3 + 1; }
std::string plugin_definition() { return fmt::format("p:xprobe_multi/plugin {}:plugin_compute x=%di:s32", PLUGIN_PATH); }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// /proc/PID/status's TracerPid: 0 when nothing traces the process.
pid_t tracer_of(pid_t pid) {
  std::istringstream status(slurp(fmt::format("/proc/{}/status", pid)));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("TracerPid:", 0) == 0) return std::stoi(line.substr(10));
  return -1;
}

// One multi_calls process, talked to through its stdin and stdout.
class Program {
 public:
  explicit Program(int id) : id_(id) {
    int to[2], from[2];
    EXPECT_EQ(pipe2(to, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(from, O_CLOEXEC), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to[0], 0);
      dup2(from[1], 1);
      const std::string number = std::to_string(id);
      execl(MULTI_CALLS_PATH, MULTI_CALLS_PATH, number.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    in_ = fdopen(to[1], "w");
    out_ = fdopen(from[0], "r");
    EXPECT_EQ(line(), fmt::format("ready {}", id));
  }
  ~Program() {
    if (in_) fclose(in_);
    if (out_) fclose(out_);
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // Sends a command; the program's answer.
  std::string say(const std::string& command) {
    commands_ += command + "\n";
    fputs((command + "\n").c_str(), in_);
    fflush(in_);
    return line();
  }
  // Ends it: its exit status (its last line is in output()).
  int quit() {
    say("quit");
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // What an untraced run given the same commands prints.
  std::string untraced_output() const {
    const std::string input = fmt::format("/tmp/xprobe-multi-input-{}-{}", getpid(), id_);
    FILE* file = fopen(input.c_str(), "w");
    fputs(commands_.c_str(), file);
    fclose(file);
    RunResult result = run_untraced({"/bin/sh", "-c", fmt::format("exec '{}' {} < '{}'", MULTI_CALLS_PATH, id_, input)});
    unlink(input.c_str());
    return result.output;
  }
  pid_t pid() const { return pid_; }
  int id() const { return id_; }
  const std::string& output() const { return output_; }

 private:
  std::string line() {
    char buffer[4096];
    if (fgets(buffer, sizeof buffer, out_) == nullptr) return {};
    output_ += buffer;
    std::string text = buffer;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  int id_;
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
  bool reaped_ = false;
  std::string commands_;
  std::string output_ = "";
};

// xprobe trace --ctl -p A -p B ... with its own runtime directory (the control socket's).
class Session {
 public:
  Session(const std::vector<pid_t>& pids, const std::vector<std::string>& options) {
    char directory[] = "/tmp/xprobe-multi-test-XXXXXX";
    dir_ = mkdtemp(directory);
    mnt_ = dir_ + "/mnt";
    mkdir(mnt_.c_str(), 0700);
    std::vector<std::string> argv{XPROBE_PATH, "trace", "--ctl", "-o", dir_ + "/trace.txt"};
    for (pid_t pid : pids) {
      argv.push_back("-p");
      argv.push_back(std::to_string(pid));
    }
    for (const std::string& option : options) argv.push_back(option == "MOUNT" ? mnt_ : option);
    pid_ = fork();
    if (pid_ == 0) {
      const int err = open((dir_ + "/stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(err, 2);
      const int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
      std::vector<char*> args;
      for (std::string& word : argv) args.push_back(word.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Session() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    (void)!system(fmt::format("fusermount3 -u -q '{}' 2>/dev/null; rm -rf '{}'", mnt_, dir_).c_str());
  }
  // True once its probes are in and it serves requests (the socket exists then), false if it ended.
  bool wait_ready() {
    const std::string socket = fmt::format("{}/xprobe/session-{}.sock", dir_, pid_);
    for (int i = 0; i < 3000; ++i) {
      struct stat info {};
      if (stat(socket.c_str(), &info) == 0) return true;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // `xprobe ctl --session PID WORDS...`: its stdout, and its status in `status`.
  std::string ctl(const std::string& words, int* status = nullptr) {
    return shell(fmt::format("XDG_RUNTIME_DIR='{}' '{}' ctl --session {} {}", dir_, XPROBE_PATH, pid_, words), status);
  }
  // A shell command run in the mount directory.
  std::string in_mount(const std::string& command, int* status = nullptr) {
    return shell(fmt::format("cd '{}' && {}", mnt_, command), status);
  }
  // xprobe's exit status once it ends by itself (-1 if it did not within the time).
  int wait_end(int seconds = 60) {
    if (reaped_) return status_;
    for (int i = 0; i < seconds * 100; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  void interrupt() { kill(pid_, SIGINT); }
  pid_t pid() const { return pid_; }
  std::string trace() const { return slurp(dir_ + "/trace.txt"); }
  std::string diagnostics() const { return slurp(dir_ + "/stderr.txt"); }
  bool mounted() const { return slurp("/proc/self/mounts").find(" " + mnt_ + " ") != std::string::npos; }

 private:
  static std::string shell(const std::string& command, int* status) {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    char buffer[4096];
    size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    const int raw = pclose(pipe);
    if (status) *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return out;
  }
  std::string dir_, mnt_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

// The HITS column of the uprobe_profile line of EVENT (-1 if there is none; -2 if several).
long profile_hits(const std::string& profile, const std::string& event) {
  long hits = -1;
  std::istringstream in(profile);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string binary, name;
    long count = 0, misses = 0;
    if (!(words >> binary >> name >> count >> misses) || name != event) continue;
    hits = hits == -1 ? count : -2;
  }
  return hits;
}

// pid -> the values of ARG in the events named EVENT that thread pid wrote.
std::map<pid_t, std::multiset<int>> events_by_pid(const std::vector<TraceEvent>& events, const std::string& event,
                                                  const std::string& arg) {
  std::map<pid_t, std::multiset<int>> out;
  for (const TraceEvent& e : events)
    if (e.event == event) out[e.tid].insert(std::stoi(e.arg(arg)));
  return out;
}

std::multiset<int> numbers(int from, int to) {
  std::multiset<int> out;
  for (int i = from; i < to; ++i) out.insert(i);
  return out;
}

struct Surface {
  const char* engine;
  bool mount;  // the definition added with echo in the mount (else with xprobe ctl)
};

class MultiProcess : public ::testing::TestWithParam<Surface> {};

// Three processes at once; one exits while the others go on; a definition added live for a
// library none has loaded goes in in each one that loads it later.
TEST_P(MultiProcess, ThreeProcessesOneExitsALibraryLoadedLater) {
  const Surface surface = GetParam();
  if (surface.mount && access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  Program a(1), b(2), c(3);
  std::vector<std::string> options{"--engine", surface.engine, "-e", work_definition()};
  if (surface.mount) options.insert(options.end(), {"--control", "MOUNT"});
  Session session({a.pid(), b.pid(), c.pid()}, options);
  ASSERT_TRUE(session.wait_ready()) << session.diagnostics();
  for (Program* program : {&a, &b, &c}) EXPECT_EQ(tracer_of(program->pid()), session.pid());
  for (Program* program : {&a, &b, &c}) EXPECT_EQ(program->say("go"), fmt::format("done {}", kCalls));
  // One line of counts for the probe, whichever processes have it: the sum of theirs.
  EXPECT_EQ(profile_hits(session.ctl("stats"), "work"), 3 * kCalls) << session.ctl("stats");

  // b goes; a and c go on.
  EXPECT_EQ(b.quit(), 0);
  EXPECT_EQ(a.say("go"), fmt::format("done {}", 2 * kCalls));
  EXPECT_EQ(c.say("go"), fmt::format("done {}", 2 * kCalls));

  // A definition for the plugin, which no process has loaded: it waits in both.
  int status = -1;
  if (surface.mount) {
    ASSERT_TRUE(session.mounted()) << session.diagnostics();
    session.in_mount(fmt::format("echo '{}' >> uprobe_events", plugin_definition()), &status);
    EXPECT_EQ(status, 0);
    session.in_mount("echo 1 > events/xprobe_multi/plugin/enable", &status);
    EXPECT_EQ(status, 0);
  } else {
    session.ctl(fmt::format("add '{}'", plugin_definition()), &status);
    EXPECT_EQ(status, 0);
    session.ctl("enable xprobe_multi/plugin", &status);
    EXPECT_EQ(status, 0);
  }
  // And one for the program itself, which a and c have mapped: in both at once.
  std::string added;
  if (surface.mount) {
    session.in_mount(fmt::format("echo '{}' >> uprobe_events && echo 1 > events/xprobe_multi/work_ret/enable",
                                 return_definition()),
                     &status);
  } else {
    added = session.ctl(fmt::format("add '{}' 2>&1", return_definition()), &status);
    if (status == 0) added += session.ctl("enable xprobe_multi/work_ret 2>&1", &status);
  }
  EXPECT_EQ(status, 0) << added;
  EXPECT_EQ(a.say(fmt::format("load {}", PLUGIN_PATH)), "loaded");
  const std::string profile = surface.mount ? session.in_mount("cat uprobe_profile") : session.ctl("stats");
  EXPECT_EQ(profile_hits(profile, "plugin"), 4) << profile;
  EXPECT_EQ(profile_hits(profile, "work"), 5 * kCalls) << profile;
  EXPECT_EQ(c.say(fmt::format("load {}", PLUGIN_PATH)), "loaded");
  EXPECT_EQ(a.say("go"), fmt::format("done {}", 3 * kCalls));
  EXPECT_EQ(c.say("go"), fmt::format("done {}", 3 * kCalls));

  EXPECT_EQ(a.quit(), 0);
  EXPECT_EQ(tracer_of(c.pid()), session.pid());  // still traced: xprobe goes on for c
  EXPECT_EQ(c.quit(), 0);
  // The last one gone, xprobe ends by itself, with the first one's status.
  EXPECT_EQ(session.wait_end(), 0) << session.diagnostics();

  for (Program* program : {&a, &b, &c}) EXPECT_EQ(program->output(), program->untraced_output());
  std::vector<std::string> bad;
  const std::vector<TraceEvent> events = parse_trace(session.trace(), &bad);
  EXPECT_TRUE(bad.empty()) << bad.front();
  // Every call of each process once, under its own pid (each is single-threaded), id matching.
  const auto work = events_by_pid(events, "work", "call");
  EXPECT_EQ(work.size(), 3u);
  EXPECT_EQ(work.count(a.pid()) ? work.at(a.pid()) : std::multiset<int>{}, numbers(0, 3 * kCalls));
  EXPECT_EQ(work.count(b.pid()) ? work.at(b.pid()) : std::multiset<int>{}, numbers(0, kCalls));
  EXPECT_EQ(work.count(c.pid()) ? work.at(c.pid()) : std::multiset<int>{}, numbers(0, 3 * kCalls));
  const auto ids = events_by_pid(events, "work", "id");
  for (Program* program : {&a, &b, &c})
    if (ids.count(program->pid())) {
      EXPECT_EQ(*ids.at(program->pid()).begin(), program->id());
    }
  for (const TraceEvent& e : events) EXPECT_EQ(e.comm, "multi_calls");
  // The plugin's calls of the two processes that loaded it, each with its own arguments.
  const auto plugin = events_by_pid(events, "plugin", "x");
  EXPECT_EQ(plugin.size(), 2u);
  EXPECT_EQ(plugin.count(a.pid()) ? plugin.at(a.pid()) : std::multiset<int>{}, numbers(10, 14));
  EXPECT_EQ(plugin.count(c.pid()) ? plugin.at(c.pid()) : std::multiset<int>{}, numbers(30, 34));
  // The return probe added live: the calls a and c made after it went in, with their results.
  std::map<pid_t, std::multiset<long>> returns;
  for (const TraceEvent& e : events)
    if (e.event == "work_ret") returns[e.tid].insert(std::stol(e.arg("ret")));
  EXPECT_EQ(returns.size(), 2u);
  for (Program* program : {&a, &c}) {
    std::multiset<long> expected;
    for (int call = 2 * kCalls; call < 3 * kCalls; ++call) expected.insert(work_result(program->id(), call));
    EXPECT_EQ(returns.count(program->pid()) ? returns.at(program->pid()) : std::multiset<long>{}, expected);
  }
  // The final profile: one line per probe, the processes' hits summed.
  const std::string diagnostics = session.diagnostics();
  EXPECT_EQ(profile_hits(diagnostics, "work"), 7 * kCalls) << diagnostics;
  EXPECT_EQ(profile_hits(diagnostics, "work_ret"), 2 * kCalls) << diagnostics;
  EXPECT_EQ(profile_hits(diagnostics, "plugin"), 8) << diagnostics;
  if (surface.mount) {
    EXPECT_FALSE(session.mounted());
  }
}

// A -p that cannot be attached: named with the reason, a failure, and the processes attached
// before it are let go as they were.
class MultiProcessEngines : public ::testing::TestWithParam<const char*> {};

TEST_P(MultiProcessEngines, AnUnattachablePidLeavesTheOthersUntouched) {
  Program a(1), b(2);
  // A pid that no process has: a child's, reaped.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  Session session({a.pid(), b.pid(), gone}, {"--engine", GetParam(), "-e", work_definition()});
  EXPECT_FALSE(session.wait_ready());
  EXPECT_NE(session.wait_end(), 0);
  const std::string diagnostics = session.diagnostics();
  EXPECT_NE(diagnostics.find(fmt::format("cannot attach to process {}: ", gone)), std::string::npos) << diagnostics;
  for (Program* program : {&a, &b}) {
    EXPECT_EQ(tracer_of(program->pid()), 0);
    EXPECT_EQ(program->say("go"), fmt::format("done {}", kCalls));
    EXPECT_EQ(program->quit(), 0);
    EXPECT_EQ(program->output(), program->untraced_output());
  }
  EXPECT_EQ(parse_trace(session.trace()).size(), 0u);
}

// SIGINT: xprobe detaches from every process, and each runs on untraced.
TEST_P(MultiProcessEngines, InterruptLetsEveryProcessRunOn) {
  Program a(1), b(2), c(3);
  Session session({a.pid(), b.pid(), c.pid()}, {"--engine", GetParam(), "-e", work_definition()});
  ASSERT_TRUE(session.wait_ready()) << session.diagnostics();
  for (Program* program : {&a, &b, &c}) EXPECT_EQ(program->say("go"), fmt::format("done {}", kCalls));
  session.interrupt();
  EXPECT_EQ(session.wait_end(), 0) << session.diagnostics();
  for (Program* program : {&a, &b, &c}) {
    EXPECT_EQ(tracer_of(program->pid()), 0);
    EXPECT_EQ(program->say("go"), fmt::format("done {}", 2 * kCalls));
    EXPECT_EQ(program->quit(), 0);
    EXPECT_EQ(program->output(), program->untraced_output());
  }
  const auto work = events_by_pid(parse_trace(session.trace()), "work", "call");
  for (Program* program : {&a, &b, &c})
    EXPECT_EQ(work.count(program->pid()) ? work.at(program->pid()) : std::multiset<int>{}, numbers(0, kCalls));
  EXPECT_EQ(profile_hits(session.diagnostics(), "work"), 3 * kCalls) << session.diagnostics();
}

// Two processes that take turns: the events come out in the order the calls were made,
// whichever process's ring (or breakpoint) they came from, with non-decreasing timestamps, as
// the kernel's trace merges its per-CPU buffers.
TEST_P(MultiProcessEngines, EventsOfSeveralProcessesAreInTheirTimeOrder) {
  Program a(1), b(2);
  Session session({a.pid(), b.pid()}, {"--engine", GetParam(), "-e", work_definition()});
  ASSERT_TRUE(session.wait_ready()) << session.diagnostics();
  std::vector<pid_t> turns;
  for (int round = 1; round <= 3; ++round) {
    for (Program* program : {&a, &b}) {
      EXPECT_EQ(program->say("go"), fmt::format("done {}", round * kCalls));
      turns.insert(turns.end(), kCalls, program->pid());
    }
  }
  EXPECT_EQ(a.quit(), 0);
  EXPECT_EQ(b.quit(), 0);
  EXPECT_EQ(session.wait_end(), 0) << session.diagnostics();
  std::vector<pid_t> order;
  double previous = 0;
  std::istringstream lines(session.trace());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string task, cpu, flags, stamp;
    words >> task >> cpu >> flags >> stamp;
    order.push_back(std::stoi(task.substr(task.rfind('-') + 1)));
    const double seconds = std::stod(stamp);
    EXPECT_GE(seconds, previous) << line;
    previous = seconds;
  }
  EXPECT_EQ(order, turns);
}

// -p and a program to start at once: refused before anything is attached or started.
TEST(MultiProcessUsage, PidsAndAProgramTogetherAreRefused) {
  Program a(1);
  const std::string marker = fmt::format("/tmp/xprobe-multi-started-{}", getpid());
  const std::string command =
      fmt::format("'{}' trace -p {} -e '{}' -- /bin/touch '{}' 2>&1", XPROBE_PATH, a.pid(), work_definition(), marker);
  FILE* pipe = popen(command.c_str(), "r");
  std::string said;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) said.append(buffer, n);
  const int status = pclose(pipe);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << said;
  EXPECT_EQ(said, fmt::format("xprobe trace: give a program to start (-- /bin/touch) or processes to attach to (-p {}), "
                              "not both\n",
                              a.pid()));
  EXPECT_NE(access(marker.c_str(), F_OK), 0);  // never started
  EXPECT_EQ(tracer_of(a.pid()), 0);
  EXPECT_EQ(a.say("go"), fmt::format("done {}", kCalls));
  EXPECT_EQ(a.quit(), 0);
  unlink(marker.c_str());
}

INSTANTIATE_TEST_SUITE_P(Engines, MultiProcessEngines, ::testing::Values("trap", "jump"));
INSTANTIATE_TEST_SUITE_P(Engines, MultiProcess,
                         ::testing::Values(Surface{"trap", false}, Surface{"jump", false}, Surface{"trap", true},
                                           Surface{"jump", true}),
                         [](const ::testing::TestParamInfo<Surface>& param) {
                           return std::string(param.param.engine) + (param.param.mount ? "Mount" : "Ctl");
                         });

}  // namespace
}  // namespace xprobe::testing
