// A live session (xprobe trace --ctl): probes added, enabled, disabled and removed through the
// control socket while eight threads of programs/live_calls.c call the probed function. The
// program makes its calls in phases the test starts one at a time, and the test acts only
// between phases, so it knows which calls were made while the probe was enabled: all of
// those must be events, exactly once each, and none of the others. The program's output and
// status must be those of an untraced run. The socket is spoken to here with a client of the
// test's own, from the protocol's description (docs/xprobe.1), not with xprobe's.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernel_tracefs.h"
#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

constexpr int kThreads = 8, kCalls = 16;

std::string work_definition(const std::string& name = "xprobe_live/work") {
  return fmt::format("p:{} {}:live_work phase=%di:s32 call=%si:s32", name, LIVE_CALLS_PATH);
}

struct Reply {
  bool ok = false;
  int error = 0;
  std::string text;
};

// How long a reply or a line of the program may take before the test calls xprobe stuck: a
// hang becomes a failure that says what xprobe and the program were doing, not ctest's timeout.
constexpr int kStuckSeconds = 90;

// "PID (state, wchan)" for the process and each of its threads, and the same for its children.
std::string where_processes_wait(pid_t pid) {
  std::string out;
  const std::string task_dir = fmt::format("/proc/{}/task", pid);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(task_dir, error)) {
    const std::string tid = entry.path().filename();
    const std::string stat = read_text_file(fmt::format("{}/{}/stat", task_dir, tid));
    const size_t close = stat.rfind(')');
    const char state = close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
    out += fmt::format(" {} ({}, {})", tid, state, read_text_file(fmt::format("{}/{}/wchan", task_dir, tid)));
    std::string children = read_text_file(fmt::format("{}/{}/children", task_dir, tid));
    for (size_t at = 0; at < children.size();) {
      const size_t end = children.find(' ', at);
      const std::string child = children.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (!child.empty()) out += " child" + where_processes_wait(static_cast<pid_t>(std::stol(child)));
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return out;
}

// One xprobe trace --ctl session on live_calls, its socket directory its own.
class LiveRun {
 public:
  explicit LiveRun(const std::vector<std::string>& xprobe_options, const std::vector<std::string>& program_args = {}) {
    char directory[] = "/tmp/xprobe-live-test-XXXXXX";
    runtime_dir_ = mkdtemp(directory);
    trace_path_ = runtime_dir_ + "/trace.txt";
    stderr_path_ = runtime_dir_ + "/stderr.txt";
    int to_program[2], from_program[2];
    EXPECT_EQ(pipe2(to_program, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(from_program, O_CLOEXEC), 0);
    std::vector<std::string> argv{XPROBE_PATH, "trace", "--ctl", "-o", trace_path_};
    for (const std::string& option : xprobe_options)
      argv.push_back(option == "MOUNT" ? (mkdir((runtime_dir_ + "/mnt").c_str(), 0700), runtime_dir_ + "/mnt") : option);
    argv.push_back("--");
    argv.push_back(LIVE_CALLS_PATH);
    argv.insert(argv.end(), program_args.begin(), program_args.end());
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_program[0], 0);
      dup2(from_program[1], 1);
      const int err = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(err, 2);
      setenv("XDG_RUNTIME_DIR", runtime_dir_.c_str(), 1);
      std::vector<char*> args;
      for (std::string& word : argv) args.push_back(word.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(to_program[0]);
    close(from_program[1]);
    to_program_ = fdopen(to_program[1], "w");
    from_program_ = from_program[0];
  }
  ~LiveRun() {
    if (socket_ >= 0) close(socket_);
    if (to_program_) fclose(to_program_);
    if (from_program_ >= 0) close(from_program_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    (void)!system(fmt::format("rm -rf '{}'", runtime_dir_).c_str());
  }

  std::string program_line() {
    for (;;) {
      if (const size_t end = unread_.find('\n'); end != std::string::npos) {
        std::string line = unread_.substr(0, end + 1);
        unread_.erase(0, end + 1);
        output_ += line;
        return line;
      }
      char chunk[256];
      const ssize_t n = readable_in_time(from_program_, "the program's next line") ? read(from_program_, chunk, sizeof chunk) : 0;
      if (n <= 0) {  // the end (or stuck): what is left, as fgets would give it
        std::string rest = std::move(unread_);
        unread_.clear();
        output_ += rest;
        return rest;
      }
      unread_.append(chunk, static_cast<size_t>(n));
    }
  }
  bool connect_socket() {
    const std::string path = fmt::format("{}/xprobe/session-{}.sock", runtime_dir_, pid_);
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return false;
    socket_mode_ = info.st_mode & 0777;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
    socket_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return connect(socket_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  Reply request(const std::string& line) {
    Reply reply;
    const std::string sent = line + "\n";
    if (write(socket_, sent.data(), sent.size()) != static_cast<ssize_t>(sent.size())) return reply;
    std::string status;
    char c = 0;
    while (readable_in_time(socket_, "the reply to " + line) && read(socket_, &c, 1) == 1 && c != '\n') status += c;
    unsigned long length = 0;
    if (std::sscanf(status.c_str(), "ok %lu", &length) == 1) {
      reply.ok = true;
    } else if (std::sscanf(status.c_str(), "error %d %lu", &reply.error, &length) != 2) {
      reply.text = "malformed status line: " + status;
      return reply;
    }
    reply.text.resize(length);
    size_t done = 0;
    while (done < length) {
      if (!readable_in_time(socket_, "the reply to " + line)) break;
      const ssize_t n = read(socket_, reply.text.data() + done, length - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    return reply;
  }
  // Runs one phase of calls; its number.
  int phase() {
    fputs("go\n", to_program_);
    fflush(to_program_);
    const std::string line = program_line();
    int number = -1;
    std::sscanf(line.c_str(), "done %d", &number);
    return number;
  }
  void tell_program(const std::string& line) {
    fputs((line + "\n").c_str(), to_program_);
    fflush(to_program_);
  }
  // Ends the program; xprobe's status.
  int finish() {
    fputs("quit\n", to_program_);
    fflush(to_program_);
    while (!program_line().empty()) {
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& output() const { return output_; }
  std::string trace() const { return read_text_file(trace_path_); }
  std::string diagnostics() const { return read_text_file(stderr_path_); }
  unsigned socket_mode() const { return socket_mode_; }
  const std::string& runtime_dir() const { return runtime_dir_; }

 private:
  // Whether `fd` has something to read within kStuckSeconds; after the first time it had not,
  // never (one failure, not one per later wait).
  bool readable_in_time(int fd, const std::string& awaited) {
    if (stuck_) return false;
    pollfd wait{fd, POLLIN, 0};
    int ready = 0;
    do ready = poll(&wait, 1, kStuckSeconds * 1000);
    while (ready < 0 && errno == EINTR);
    if (ready > 0) return true;
    stuck_ = true;
    ADD_FAILURE() << "nothing within " << kStuckSeconds << " s while waiting for " << awaited
                  << "; xprobe and its program wait at:" << where_processes_wait(pid_) << "\nxprobe's stderr:\n"
                  << diagnostics();
    return false;
  }

  std::string runtime_dir_, trace_path_, stderr_path_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  FILE* to_program_ = nullptr;
  int from_program_ = -1;
  std::string unread_;  // read from the program, not yet returned as a line
  bool stuck_ = false;
  int socket_ = -1;
  unsigned socket_mode_ = 0;
  std::string output_;
};

// The program untraced, with `phases` phases: its output and status.
RunResult untraced(int phases) {
  std::string input;
  for (int i = 0; i < phases; ++i) input += "go\n";
  const std::string path = fmt::format("/tmp/xprobe-live-input-{}", getpid());
  FILE* file = fopen(path.c_str(), "w");
  fputs(input.c_str(), file);
  fclose(file);
  RunResult result = run_untraced({"/bin/sh", "-c", fmt::format("exec '{}' < '{}'", LIVE_CALLS_PATH, path)});
  unlink(path.c_str());
  return result;
}

// phase -> the call numbers of its events (each phase's calls are numbered 0..kThreads*kCalls-1).
std::map<int, std::multiset<int>> calls_by_phase(const std::string& trace) {
  std::vector<std::string> bad;
  std::map<int, std::multiset<int>> calls;
  for (const TraceEvent& event : parse_trace(trace, &bad)) {
    EXPECT_EQ(event.event, "work");
    calls[std::stoi(event.arg("phase"))].insert(std::stoi(event.arg("call")));
  }
  EXPECT_TRUE(bad.empty()) << bad.front();
  return calls;
}

// Every call of each enabled phase once, nothing of any other phase.
void expect_enabled_phases_only(const std::map<int, std::multiset<int>>& calls, const std::set<int>& enabled, int phases) {
  std::multiset<int> all;
  for (int call = 0; call < kThreads * kCalls; ++call) all.insert(call);
  for (int phase = 1; phase <= phases; ++phase) {
    auto found = calls.find(phase);
    if (enabled.contains(phase)) {
      ASSERT_NE(found, calls.end()) << "no events of enabled phase " << phase;
      ASSERT_EQ(found->second, all) << "phase " << phase << ": " << found->second.size() << " events";
    } else {
      ASSERT_EQ(found, calls.end()) << found->second.size() << " events of disabled phase " << phase;
    }
  }
  for (const auto& [phase, numbers] : calls) ASSERT_TRUE(phase >= 1 && phase <= phases) << "phase " << phase;
}

class LiveControl : public ::testing::TestWithParam<const char*> {};

TEST_P(LiveControl, AddEnableDisableRemoveCyclesWhileEightThreadsCall) {
  const int cycles = std::string(GetParam()) == "jump" ? 1000 : 300;
  LiveRun run({"--engine", GetParam()});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  ASSERT_TRUE(run.connect_socket()) << run.diagnostics();
  EXPECT_EQ(run.socket_mode(), 0600u);
  std::set<int> enabled;
  int phases = 0;
  auto ok = [&](const std::string& line) {
    const Reply reply = run.request(line);
    ASSERT_TRUE(reply.ok) << line << ": " << reply.error << " " << reply.text;
  };
  // Each way of naming the event in turn: GRP/EVENT, the group, every event, the event alone.
  const char* const enable_targets[] = {"xprobe_live/work", "xprobe_live/", "", "work"};
  for (int cycle = 0; cycle < cycles; ++cycle) {
    const std::string target = enable_targets[cycle % 4], other = enable_targets[(cycle + 1) % 4];
    ok("add " + work_definition());
    ASSERT_EQ(run.phase(), ++phases);  // added: planted, disabled (as in tracefs)
    ok("enable " + target);
    ASSERT_EQ(run.phase(), ++phases);
    enabled.insert(phases);
    ok("disable " + other);
    ok("remove xprobe_live/work");
    ASSERT_EQ(run.phase(), ++phases);  // removed
    if (HasFailure()) break;
  }
  const int status = run.finish();
  const RunResult reference = untraced(phases);
  EXPECT_EQ(run.output(), reference.output);
  EXPECT_EQ(status, reference.exit_status) << run.diagnostics();
  expect_enabled_phases_only(calls_by_phase(run.trace()), enabled, phases);
}

TEST_P(LiveControl, ListStatsAndTheKernelsRefusals) {
  LiveRun run({"--engine", GetParam()});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  ASSERT_TRUE(run.connect_socket()) << run.diagnostics();
  EXPECT_EQ(run.request("list").text, "");
  ASSERT_TRUE(run.request("add " + work_definition()).ok);
  ASSERT_TRUE(run.request("add " + work_definition("xprobe_live/again")).ok);
  EXPECT_EQ(run.request("list").text, fmt::format("{}\n{}\n", work_definition(), work_definition("xprobe_live/again")));
  // The same probe point again for the same event: the kernel's EEXIST.
  Reply same = run.request("add " + work_definition());
  EXPECT_EQ(same.error, EEXIST) << same.text;
  EXPECT_NE(same.text.find("There is already the exact same probe event"), std::string::npos) << same.text;
  ASSERT_TRUE(run.request("enable xprobe_live/work").ok);
  // An enabled event cannot be deleted (EBUSY), one that does not exist is ENOENT.
  EXPECT_EQ(run.request("remove xprobe_live/work").error, EBUSY);
  EXPECT_EQ(run.request("remove xprobe_live/nosuch").error, ENOENT);
  EXPECT_EQ(run.request("enable xprobe_live/nosuch").error, ENOENT);
  EXPECT_EQ(run.request("frobnicate").error, EINVAL);
  ASSERT_EQ(run.phase(), 1);
  ASSERT_EQ(run.phase(), 2);
  // uprobe_profile: the enabled event's hits, the disabled one's none.
  const std::string stats = run.request("stats").text;
  const std::string hits = std::to_string(2 * kThreads * kCalls);
  // "  BINARY EVENT(%-44s) HITS(%15lu) MISSES(%15lu)"
  const std::string work_line = fmt::format(" work{}{} ", std::string(44 - 4 + 1 + 15 - hits.size(), ' '), hits);
  EXPECT_NE(stats.find(work_line), std::string::npos) << stats;
  EXPECT_NE(stats.find(fmt::format(" again{}0 ", std::string(44 - 5 + 1 + 15 - 1, ' '))), std::string::npos) << stats;
  ASSERT_TRUE(run.request("disable").ok);
  ASSERT_TRUE(run.request("remove xprobe_live/").ok);  // the whole group
  EXPECT_EQ(run.request("list").text, "");
  EXPECT_EQ(run.request("stats").text, "");
  ASSERT_EQ(run.phase(), 3);
  EXPECT_EQ(run.finish(), untraced(3).exit_status);
  // The final profile keeps the removed probes' counts.
  EXPECT_NE(run.diagnostics().find(work_line), std::string::npos) << run.diagnostics();
  expect_enabled_phases_only(calls_by_phase(run.trace()), {1, 2}, 3);
}

// The kernel's error_log entry for a refused line, from "error:" on (timestamps differ).
std::vector<std::string> kernel_error_entries(const std::vector<std::string>& bad_lines, std::string* why_not) {
  std::vector<std::string> entries;
  auto tracefs = KernelTracefs::open(why_not);
  if (!tracefs) return entries;
  for (const std::string& line : bad_lines) {
    int error = 0;
    EXPECT_FALSE(tracefs->define(line, &error)) << line;
    const std::string log = tracefs->error_log();
    const size_t at = log.rfind("trace_uprobe: error:");
    EXPECT_NE(at, std::string::npos) << log;
    if (at == std::string::npos) return {};
    entries.push_back(log.substr(at + std::strlen("trace_uprobe: ")));
  }
  return entries;
}

// A bad line is refused with the kernel's message and caret, as the kernel's error_log shows
// them for the same line (the kernel's uprobe_events is the oracle, one line at a time).
TEST(LiveControlRefusals, SameMessageAndCaretAsTheKernel) {
  // The kernel's uprobe_events wants a file offset.
  const std::string place = fmt::format("{}:{:#x}", LIVE_CALLS_PATH, file_offset_of(LIVE_CALLS_PATH, "live_work"));
  const std::vector<std::string> bad_lines = {
      fmt::format("p:xpt_live/bad {} x=%zz", place),
      fmt::format("p:xpt_live/bad {} x=+0(%di", place),
      fmt::format("p:xpt_live/bad {} x=%di:u99", place),
      fmt::format("p:xpt_live/bad {} x=%di y=%si x=%dx", place),
      fmt::format("p:xpt_live/1bad {}", place),
  };
  std::string why_not;
  const std::vector<std::string> kernel_entries = kernel_error_entries(bad_lines, &why_not);
  if (kernel_entries.empty()) GTEST_SKIP() << why_not;
  ASSERT_EQ(kernel_entries.size(), bad_lines.size());
  LiveRun run({});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  ASSERT_TRUE(run.connect_socket()) << run.diagnostics();
  for (size_t i = 0; i < bad_lines.size(); ++i) {
    const Reply reply = run.request("add " + bad_lines[i]);
    EXPECT_EQ(reply.error, EINVAL) << bad_lines[i];
    const size_t at = reply.text.find("error:");
    ASSERT_NE(at, std::string::npos) << reply.text;
    EXPECT_EQ(reply.text.substr(at), kernel_entries[i]) << bad_lines[i];
  }
  EXPECT_EQ(run.request("list").text, "");
  EXPECT_EQ(run.finish(), untraced(0).exit_status);
}

// A probe removed while a thread sits inside its trampoline (parked in a signal handler that
// interrupted the agent or the trampoline's code): the thread later returns there and runs on
// correctly, also after a probe at the same address got a trampoline of its own meanwhile.
TEST(LiveControlTrampoline, RemovedWhileAThreadIsInsideItsTrampoline) {
  LiveRun run({"--engine", "jump", "-e", work_definition()}, {"park"});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  ASSERT_TRUE(run.connect_socket()) << run.diagnostics();
  run.tell_program("go");
  ASSERT_EQ(run.program_line(), "parked\n") << run.diagnostics();
  for (const char* line : {"disable xprobe_live/work", "remove xprobe_live/work"}) {
    const Reply reply = run.request(line);
    ASSERT_TRUE(reply.ok) << line << ": " << reply.text;
  }
  // Probes come and go at the same address while the thread is parked; the last one stays.
  for (int i = 0; i < 20; ++i) {
    const std::string name = fmt::format("xprobe_live/other{}", i);
    ASSERT_TRUE(run.request("add " + work_definition(name)).ok);
    ASSERT_TRUE(run.request("enable " + name).ok);
    ASSERT_TRUE(run.request("disable " + name).ok);
    ASSERT_TRUE(run.request("remove " + name).ok);
  }
  ASSERT_TRUE(run.request("add " + work_definition("xprobe_live/after")).ok);
  ASSERT_TRUE(run.request("enable xprobe_live/after").ok);
  run.tell_program("go");
  EXPECT_EQ(run.program_line(), "released\n");
  EXPECT_EQ(run.finish(), 0) << run.diagnostics();
  std::vector<std::string> bad;
  std::multiset<int> after_calls;
  size_t before = 0;
  for (const TraceEvent& event : parse_trace(run.trace(), &bad)) {
    if (event.event == "work") ++before;
    if (event.event == "after" && event.arg("phase") == "2") after_calls.insert(std::stoi(event.arg("call")));
    EXPECT_TRUE(event.event == "work" || event.event == "after") << event.event;
  }
  EXPECT_TRUE(bad.empty());
  EXPECT_GT(before, 0u);
  std::multiset<int> all;
  for (int call = 0; call < 1000; ++call) all.insert(call);
  EXPECT_EQ(after_calls, all);
}

// The shell's exit status and output of `command`, run in `directory`.
struct Shell {
  int status = -1;
  std::string output;
};
Shell shell(const std::string& directory, const std::string& command) {
  Shell result;
  FILE* pipe = popen(fmt::format("cd '{}' && {{ {}; }} 2>/dev/null", directory, command).c_str(), "r");
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool mounted(const std::string& directory) {
  return read_text_file("/proc/self/mounts").find(" " + directory + " ") != std::string::npos;
}

// The kernel's format file for `definition` (its ID line left out), or "" with `why_not`.
std::string kernel_format(const std::string& definition, const std::string& group_event, std::string* why_not) {
  auto tracefs = KernelTracefs::open(why_not);
  if (!tracefs) return {};
  EXPECT_TRUE(tracefs->define(definition)) << definition;
  std::string format = read_text_file(fmt::format("{}/events/{}/format", tracefs->root(), group_event));
  tracefs->undefine(group_event);
  return format;
}

std::string without_id_line(const std::string& format) {
  const size_t id = format.find("\nID: ");
  if (id == std::string::npos) return format;
  return format.substr(0, id + 1) + format.substr(format.find('\n', id + 1) + 1);
}

// Every file of the tracefs-compatible mount, with the shell's echo and cat.
TEST_P(LiveControl, TheMountWithEchoAndCat) {
  if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  LiveRun run({"--engine", GetParam(), "--control", "MOUNT"});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  const std::string mnt = run.runtime_dir() + "/mnt";
  ASSERT_TRUE(mounted(mnt)) << run.diagnostics();
  const std::string definition = work_definition();
  EXPECT_EQ(shell(mnt, "echo '" + definition + "' >> uprobe_events").status, 0);
  EXPECT_EQ(shell(mnt, "cat uprobe_events").output, definition + "\n");
  EXPECT_EQ(shell(mnt, "ls events/xprobe_live/work").output, "enable\nfilter\nformat\nhist\ntrigger\n");
  EXPECT_EQ(shell(mnt, "cat events/xprobe_live/work/enable").output, "0\n");
  EXPECT_EQ(shell(mnt, "cat events/xprobe_live/work/filter").output, "none\n");
  // The format file is the kernel's for the same definition.
  std::string why_not;
  const std::string kernel = kernel_format(
      fmt::format("p:xprobe_live/work {}:{:#x} phase=%di:s32 call=%si:s32", LIVE_CALLS_PATH, file_offset_of(LIVE_CALLS_PATH, "live_work")),
      "xprobe_live/work", &why_not);
  if (!kernel.empty()) {
    EXPECT_EQ(without_id_line(shell(mnt, "cat events/xprobe_live/work/format").output), without_id_line(kernel));
  }
  // Enabled: the phase's events are in trace, with the kernel's header.
  EXPECT_EQ(shell(mnt, "echo 1 > events/xprobe_live/work/enable").status, 0);
  EXPECT_EQ(shell(mnt, "cat events/xprobe_live/enable events/enable").output, "1\n1\n");
  ASSERT_EQ(run.phase(), 1);
  const std::string trace = shell(mnt, "cat trace").output;
  EXPECT_EQ(trace.rfind("# tracer: nop\n#\n# entries-in-buffer/entries-written: 128/128   #P:", 0), 0u) << trace;
  expect_enabled_phases_only(calls_by_phase(trace), {1}, 1);
  EXPECT_EQ(shell(mnt, "echo > trace && grep -vc '^#' trace").output, "0\n");
  // trace_pipe: a reader that blocks until events come, and goes away after 128 lines.
  FILE* reader = popen(fmt::format("head -n {} '{}/trace_pipe'", kThreads * kCalls, mnt).c_str(), "r");
  ASSERT_EQ(run.phase(), 2);
  std::string piped;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, reader)) > 0;) piped.append(buffer, n);
  EXPECT_EQ(pclose(reader), 0);
  expect_enabled_phases_only(calls_by_phase(piped), {2}, 2);
  // Consumed: trace no longer has them.
  EXPECT_EQ(shell(mnt, "grep -vc '^#' trace").output, "0\n");
  const std::string hits = std::to_string(2 * kThreads * kCalls);
  EXPECT_NE(shell(mnt, "cat uprobe_profile").output.find(" " + hits + " "), std::string::npos);
  // tracing_on 0: nothing goes into the buffer (the -o file still gets everything).
  EXPECT_EQ(shell(mnt, "echo 0 > tracing_on && cat tracing_on").output, "0\n");
  ASSERT_EQ(run.phase(), 3);
  EXPECT_EQ(shell(mnt, "grep -vc '^#' trace").output, "0\n");
  EXPECT_EQ(shell(mnt, "echo 1 > tracing_on && echo 4 > buffer_size_kb && cat buffer_size_kb").output, "4\n");
  // A small buffer keeps the newest events only, as the kernel's overwrites the oldest.
  ASSERT_EQ(run.phase(), 4);
  const std::string small = shell(mnt, "grep -v '^#' trace").output;
  EXPECT_LE(small.size(), 4096u);
  EXPECT_GT(small.size(), 0u);
  // The oldest were overwritten: counted, and said at the end (the buffer was empty before).
  const auto held = static_cast<int>(std::count(small.begin(), small.end(), '\n'));
  EXPECT_LT(held, kThreads * kCalls);
  // Refusals: EBUSY for an enabled event, EINVAL and the kernel's error_log for a bad line.
  EXPECT_NE(shell(mnt, "echo '-:xprobe_live/work' >> uprobe_events").status, 0);
  EXPECT_NE(shell(mnt, "echo > uprobe_events").status, 0);
  const std::string bad =
      fmt::format("p:xpt_live/bad {}:{:#x} x=%zz", LIVE_CALLS_PATH, file_offset_of(LIVE_CALLS_PATH, "live_work"));
  EXPECT_NE(shell(mnt, "echo '" + bad + "' >> uprobe_events").status, 0);
  const std::vector<std::string> kernel_entries = kernel_error_entries({bad}, &why_not);
  const std::string log = shell(mnt, "cat error_log").output;
  EXPECT_NE(log.find("] trace_uprobe: error:"), std::string::npos) << log;
  if (!kernel_entries.empty()) {
    EXPECT_EQ(log.substr(log.find("error:")), kernel_entries[0]);
  }
  EXPECT_EQ(shell(mnt, "echo > error_log && cat error_log").output, "");
  // Disabled, then removed by truncation.
  EXPECT_EQ(shell(mnt, "echo 0 > events/enable && cat events/xprobe_live/work/enable").output, "0\n");
  EXPECT_EQ(shell(mnt, "echo > uprobe_events && cat uprobe_events").output, "");
  EXPECT_NE(shell(mnt, "ls events/xprobe_live").status, 0);
  ASSERT_EQ(run.phase(), 5);
  EXPECT_EQ(run.finish(), untraced(5).exit_status) << run.diagnostics();
  EXPECT_EQ(run.output(), untraced(5).output);
  EXPECT_FALSE(mounted(mnt));  // unmounted at the end
  expect_enabled_phases_only(calls_by_phase(run.trace()), {1, 2, 3, 4}, 5);
  EXPECT_NE(run.diagnostics().find(fmt::format("xprobe: {} events were overwritten in the buffer behind trace and trace_pipe",
                                               kThreads * kCalls - held)),
            std::string::npos)
      << run.diagnostics();
}

// The kernel's answer to a bad filter written to `group_event`'s filter file, for a
// definition of its own: what the file shows then, and its error_log entry from "error:" on.
struct KernelFilterRefusal {
  std::string file, log;
};
KernelFilterRefusal kernel_filter_refusal(const std::string& definition, const std::string& group_event,
                                          const std::string& filter, std::string* why_not) {
  KernelFilterRefusal refusal;
  auto tracefs = KernelTracefs::open(why_not);
  if (!tracefs) return refusal;
  EXPECT_TRUE(tracefs->define(definition)) << definition;
  EXPECT_FALSE(tracefs->set_filter(group_event, filter, &refusal.file)) << filter;
  // The refusal is logged in the instance the filter was written in.
  const std::string log = read_text_file(tracefs->instance() + "/error_log");
  const size_t at = log.rfind("event filter parse error: error:");
  EXPECT_NE(at, std::string::npos) << log;
  if (at != std::string::npos) refusal.log = log.substr(at + std::strlen("event filter parse error: "));
  tracefs->set_filter(group_event, "0");
  tracefs->undefine(group_event);
  return refusal;
}

std::string kernel_work_definition(const std::string& name) {
  return fmt::format("p:{} {}:{:#x} phase=%di:s32 call=%si:s32", name, LIVE_CALLS_PATH,
                     file_offset_of(LIVE_CALLS_PATH, "live_work"));
}

std::multiset<int> calls_from(int first, int last) {
  std::multiset<int> calls;
  for (int call = first; call <= last; ++call) calls.insert(call);
  return calls;
}

long ring_records(const std::string& diagnostics) {
  const size_t at = diagnostics.find("ring records read: ");
  return at == std::string::npos ? -1 : std::stol(diagnostics.substr(at + std::strlen("ring records read: ")));
}

// The `trace` header's "entries-in-buffer/entries-written" line.
std::string entries_line(const std::string& trace) {
  const size_t at = trace.find("# entries-in-buffer/entries-written:");
  return at == std::string::npos ? std::string() : trace.substr(at, trace.find('\n', at) - at);
}

// The buffer's counts as the kernel keeps them: entries-written is what the buffer holds plus
// what it overwrote since it was last cleared; events trace_pipe consumed count in neither.
// The same sequence (one phase, trace_pipe read, one phase, a clear, a small buffer and one
// phase) on the kernel's own instance with the same probe is the oracle.
TEST_P(LiveControl, TheTraceHeadersCountsAreTheKernels) {
  if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  std::string why_not;
  auto tracefs = KernelTracefs::open(&why_not);
  if (!tracefs) GTEST_SKIP() << why_not;
  ASSERT_TRUE(tracefs->define(kernel_work_definition("xpt_live_counts/work")));
  ASSERT_TRUE(tracefs->enable_group("xpt_live_counts"));
  std::vector<std::string> kernel;
  tracefs->clear_trace();
  (void)untraced(1);
  kernel.push_back(entries_line(tracefs->trace()));
  (void)shell(tracefs->instance(), "timeout 1 cat trace_pipe > /dev/null");
  kernel.push_back(entries_line(tracefs->trace()));
  (void)untraced(1);
  kernel.push_back(entries_line(tracefs->trace()));
  tracefs->clear_trace();
  kernel.push_back(entries_line(tracefs->trace()));
  tracefs->enable_group("xpt_live_counts", false);
  tracefs->undefine("xpt_live_counts/work");
  // The kernel saw the phase's every call (else the comparison below would prove nothing).
  EXPECT_EQ(kernel[0].rfind(fmt::format("# entries-in-buffer/entries-written: {0}/{0}   #P:", kThreads * kCalls), 0), 0u)
      << kernel[0];

  LiveRun run({"--engine", GetParam(), "--control", "MOUNT"});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  const std::string mnt = run.runtime_dir() + "/mnt";
  ASSERT_TRUE(mounted(mnt)) << run.diagnostics();
  EXPECT_EQ(shell(mnt, "echo '" + work_definition() + "' >> uprobe_events && echo 1 > events/enable").status, 0);
  std::vector<std::string> ours;
  ASSERT_EQ(run.phase(), 1);
  ours.push_back(entries_line(shell(mnt, "cat trace").output));
  (void)shell(mnt, "timeout 1 cat trace_pipe > /dev/null");
  ours.push_back(entries_line(shell(mnt, "cat trace").output));
  ASSERT_EQ(run.phase(), 2);
  ours.push_back(entries_line(shell(mnt, "cat trace").output));
  EXPECT_EQ(shell(mnt, "echo > trace").status, 0);
  ours.push_back(entries_line(shell(mnt, "cat trace").output));
  EXPECT_EQ(ours, kernel);
  // A buffer too small for a phase: it holds the newest, and entries-written still counts the
  // phase's every event (the kernel's written = entries + overrun).
  EXPECT_EQ(shell(mnt, "echo 4 > buffer_size_kb").status, 0);
  ASSERT_EQ(run.phase(), 3);
  const std::string small = shell(mnt, "cat trace").output;
  unsigned long held = 0, written = 0;
  EXPECT_EQ(std::sscanf(entries_line(small).c_str(), "# entries-in-buffer/entries-written: %lu/%lu", &held, &written), 2);
  EXPECT_LT(held, static_cast<unsigned long>(kThreads * kCalls));
  EXPECT_EQ(written, static_cast<unsigned long>(kThreads * kCalls));
  EXPECT_EQ(shell(mnt, "echo 0 > events/enable").status, 0);
  EXPECT_EQ(run.finish(), untraced(3).exit_status) << run.diagnostics();
}

// A filter written while tracing (xprobe ctl's filter request) takes effect on the live probe:
// only the calls it lets through are events; with the jump engine the agent turns the others
// away (no ring record). A bad one is refused with EINVAL and the kernel's file text, and, as
// in the kernel, leaves the event unfiltered.
TEST_P(LiveControl, FilterWrittenWhileTracing) {
  const bool jump = std::string(GetParam()) == "jump";
  LiveRun run({"--engine", GetParam(), "--summary", "-e", work_definition()});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  ASSERT_TRUE(run.connect_socket()) << run.diagnostics();
  EXPECT_EQ(run.request("filter xprobe_live/work").text, "none\n");
  Reply set = run.request("filter xprobe_live/work call < 10");
  ASSERT_TRUE(set.ok) << set.text;
  EXPECT_EQ(run.request("filter xprobe_live/work").text, "call < 10\n");
  ASSERT_EQ(run.phase(), 1);
  set = run.request("filter xprobe_live/work call >= 120 && phase == 2");
  ASSERT_TRUE(set.ok) << set.text;
  ASSERT_EQ(run.phase(), 2);
  const std::string bad = "call <";
  const Reply refused = run.request("filter xprobe_live/work " + bad);
  EXPECT_EQ(refused.error, EINVAL) << refused.text;
  std::string why_not;
  const KernelFilterRefusal kernel = kernel_filter_refusal(kernel_work_definition("xpt_live/work"), "xpt_live/work", bad, &why_not);
  if (!kernel.file.empty()) {
    EXPECT_EQ(refused.text + "\n", kernel.file);
    EXPECT_EQ(run.request("filter xprobe_live/work").text, kernel.file);
  }
  ASSERT_EQ(run.phase(), 3);  // unfiltered, as the kernel leaves an event after a refused filter
  ASSERT_TRUE(run.request("filter xprobe_live/work phase == 4").ok);
  ASSERT_EQ(run.phase(), 4);
  ASSERT_TRUE(run.request("filter xprobe_live/work 0").ok);
  EXPECT_EQ(run.request("filter xprobe_live/work").text, "none\n");
  ASSERT_EQ(run.phase(), 5);
  EXPECT_EQ(run.request("filter xprobe_live/nosuch 0").error, ENOENT);
  EXPECT_EQ(run.finish(), untraced(5).exit_status) << run.diagnostics();
  EXPECT_EQ(run.output(), untraced(5).output);
  const auto calls = calls_by_phase(run.trace());
  const std::multiset<int> all = calls_from(0, kThreads * kCalls - 1);
  const std::map<int, std::multiset<int>> expected{
      {1, calls_from(0, 9)}, {2, calls_from(120, 127)}, {3, all}, {4, all}, {5, all}};
  EXPECT_EQ(calls, expected);
  // In the agent: the hits the filters turned away made no record.
  if (jump) {
    EXPECT_EQ(ring_records(run.diagnostics()), 10 + 8 + 3 * kThreads * kCalls) << run.diagnostics();
  }
}

// The same through the mount: echo and cat on events/GRP/EVENT/filter, error_log as the kernel's.
TEST_P(LiveControl, FilterFileOfTheMount) {
  if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  LiveRun run({"--engine", GetParam(), "--control", "MOUNT"});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  const std::string mnt = run.runtime_dir() + "/mnt";
  ASSERT_TRUE(mounted(mnt)) << run.diagnostics();
  EXPECT_EQ(shell(mnt, "echo '" + work_definition() + "' >> uprobe_events").status, 0);
  EXPECT_EQ(shell(mnt, "echo 'call == 7 || call == 100' > events/xprobe_live/work/filter").status, 0);
  EXPECT_EQ(shell(mnt, "cat events/xprobe_live/work/filter").output, "call == 7 || call == 100\n");
  EXPECT_EQ(shell(mnt, "echo 1 > events/xprobe_live/work/enable").status, 0);
  ASSERT_EQ(run.phase(), 1);
  for (const std::string bad : {"call <", "bogus == 1", "(call == 1", "call == 1 &&", "phase == "}) {
    EXPECT_NE(shell(mnt, "echo > error_log; echo '" + bad + "' > events/xprobe_live/work/filter").status, 0) << bad;
    std::string why_not;
    const KernelFilterRefusal kernel = kernel_filter_refusal(kernel_work_definition("xpt_live/work"), "xpt_live/work", bad, &why_not);
    const std::string log = shell(mnt, "cat error_log").output;
    ASSERT_NE(log.find("] event filter parse error: error:"), std::string::npos) << bad << "\n" << log;
    if (kernel.file.empty()) continue;
    EXPECT_EQ(shell(mnt, "cat events/xprobe_live/work/filter").output, kernel.file) << bad;
    EXPECT_EQ(log.substr(log.find("] event filter parse error: ") + std::strlen("] event filter parse error: ")), kernel.log) << bad;
  }
  EXPECT_EQ(shell(mnt, "echo 'phase == 2 && call < 3' > events/xprobe_live/work/filter").status, 0);
  ASSERT_EQ(run.phase(), 2);
  EXPECT_EQ(shell(mnt, "echo 0 > events/xprobe_live/work/filter && cat events/xprobe_live/work/filter").output, "none\n");
  EXPECT_EQ(shell(mnt, "echo 0 > events/xprobe_live/work/enable").status, 0);
  EXPECT_EQ(run.finish(), untraced(2).exit_status) << run.diagnostics();
  const std::map<int, std::multiset<int>> expected{{1, {7, 100}}, {2, calls_from(0, 2)}};
  EXPECT_EQ(calls_by_phase(run.trace()), expected);
}

// A hist trigger written to the event's trigger file while tracing: the trigger file lists it
// as the kernel does, the hist file is its table (each phase's 8 threads make 16 calls each
// with the phase's number), and :pause, :cont, :clear and !hist act on it.
TEST_P(LiveControl, TheMountsTriggerAndHistFiles) {
  if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  LiveRun run({"--engine", GetParam(), "--control", "MOUNT"});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  const std::string mnt = run.runtime_dir() + "/mnt";
  ASSERT_TRUE(mounted(mnt)) << run.diagnostics();
  EXPECT_EQ(shell(mnt, "echo '" + work_definition() + "' >> uprobe_events && echo 1 > events/xprobe_live/work/enable").status, 0);
  const std::string dir = "events/xprobe_live/work/";
  EXPECT_EQ(shell(mnt, "cat " + dir + "trigger").output,
            "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n");
  EXPECT_EQ(shell(mnt, "echo 'hist:keys=phase' > " + dir + "trigger").status, 0);
  EXPECT_EQ(shell(mnt, "cat " + dir + "trigger").output, "hist:keys=phase:vals=hitcount:sort=hitcount:size=2048 [active]\n");
  ASSERT_EQ(run.phase(), 1);
  ASSERT_EQ(run.phase(), 2);
  std::string hist = shell(mnt, "cat " + dir + "hist").output;
  EXPECT_NE(hist.find("{ phase:          1 } hitcount:        128\n{ phase:          2 } hitcount:        128\n"), std::string::npos)
      << hist;
  EXPECT_NE(hist.find("Totals:\n    Hits: 256\n    Entries: 2\n    Dropped: 0\n"), std::string::npos) << hist;
  EXPECT_EQ(shell(mnt, "echo 'hist:keys=phase:pause' >> " + dir + "trigger && cat " + dir + "trigger").output,
            "hist:keys=phase:vals=hitcount:sort=hitcount:size=2048 [paused]\n");
  ASSERT_EQ(run.phase(), 3);
  EXPECT_NE(shell(mnt, "cat " + dir + "hist").output.find("    Hits: 256\n"), std::string::npos);
  EXPECT_EQ(shell(mnt, "echo 'hist:keys=phase:clear' >> " + dir + "trigger && echo 'hist:keys=phase:cont' >> " + dir + "trigger").status, 0);
  ASSERT_EQ(run.phase(), 4);
  hist = shell(mnt, "cat " + dir + "hist").output;
  EXPECT_NE(hist.find("{ phase:          4 } hitcount:        128\n\nTotals:\n    Hits: 128\n"), std::string::npos) << hist;
  // Refused: a second trigger like it, a bad one (its message in error_log), :cont of none.
  EXPECT_NE(shell(mnt, "echo 'hist:keys=phase' >> " + dir + "trigger").status, 0);
  EXPECT_NE(shell(mnt, "echo 'hist:keys=nosuch' >> " + dir + "trigger").status, 0);
  EXPECT_NE(shell(mnt, "cat error_log").output.find("Couldn't find field: nosuch"), std::string::npos);
  EXPECT_NE(shell(mnt, "echo 'hist:keys=call:cont' >> " + dir + "trigger").status, 0);
  EXPECT_EQ(shell(mnt, "echo '!hist:keys=phase' >> " + dir + "trigger && cat " + dir + "hist").output, "");
  ASSERT_EQ(run.phase(), 5);
  EXPECT_EQ(run.finish(), untraced(5).exit_status) << run.diagnostics();
  // Phase 5 ran without a trigger: its calls are events again.
  expect_enabled_phases_only(calls_by_phase(run.trace()), {5}, 5);
}

// Hist triggers added and removed live on one event while another event on the same function
// has a filter: the triggered event's hits are folded (in the agent with the jump engine: no
// ring record), the other event's filter goes on turning hits away, a trigger removed leaves
// the other trigger's counts exact, and an event without triggers records its calls again.
TEST_P(LiveControl, LiveTriggersFoldInTheAgentAndLeaveOtherEventsAlone) {
  if (access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  const bool jump = std::string(GetParam()) == "jump";
  LiveRun run({"--engine", GetParam(), "--summary", "--control", "MOUNT", "-e", work_definition(), "-e",
               work_definition("xprobe_live/other"), "--filter", "xprobe_live/other:call == 5"});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  const std::string mnt = run.runtime_dir() + "/mnt";
  ASSERT_TRUE(mounted(mnt)) << run.diagnostics();
  const std::string dir = "events/xprobe_live/work/";
  ASSERT_EQ(run.phase(), 1);  // no trigger: 128 work events, one other event
  ASSERT_EQ(shell(mnt, "echo 'hist:keys=phase' >> " + dir + "trigger").status, 0);
  ASSERT_EQ(shell(mnt, "echo 'hist:keys=call.log2' >> " + dir + "trigger").status, 0);
  ASSERT_EQ(run.phase(), 2);  // both triggers: no work event
  std::string hist = shell(mnt, "cat " + dir + "hist").output;
  EXPECT_NE(hist.find("{ phase:          2 } hitcount:        128\n\nTotals:\n    Hits: 128\n"), std::string::npos) << hist;
  EXPECT_EQ(shell(mnt, "echo '!hist:keys=phase' >> " + dir + "trigger").status, 0);
  ASSERT_EQ(run.phase(), 3);  // the log2 trigger alone
  hist = shell(mnt, "cat " + dir + "hist").output;
  EXPECT_EQ(hist.find("{ phase:"), std::string::npos) << hist;
  EXPECT_NE(hist.find("Totals:\n    Hits: 256\n"), std::string::npos) << hist;
  EXPECT_EQ(shell(mnt, "echo '!hist:keys=call.log2' >> " + dir + "trigger && cat " + dir + "hist").output, "");
  ASSERT_EQ(run.phase(), 4);  // no trigger again
  EXPECT_EQ(run.finish(), untraced(4).exit_status) << run.diagnostics();
  std::map<int, std::multiset<int>> work, other;
  std::vector<std::string> bad;
  for (const TraceEvent& event : parse_trace(run.trace(), &bad))
    (event.event == "work" ? work : other)[std::stoi(event.arg("phase"))].insert(std::stoi(event.arg("call")));
  EXPECT_TRUE(bad.empty()) << bad.front();
  const std::multiset<int> all = calls_from(0, kThreads * kCalls - 1);
  EXPECT_EQ(work, (std::map<int, std::multiset<int>>{{1, all}, {4, all}}));
  EXPECT_EQ(other, (std::map<int, std::multiset<int>>{{1, {5}}, {2, {5}}, {3, {5}}, {4, {5}}}));
  // In the agent: neither the folded hits nor the filtered ones made a record.
  if (jump) {
    EXPECT_EQ(ring_records(run.diagnostics()), 2 * kThreads * kCalls + 4) << run.diagnostics();
  }
}

// A source-level definition (DWARF: a function and its parameters by name) added live: it goes
// in as the kernel-syntax definition it stands for, and its values are the program's own.
TEST_P(LiveControl, SourceLevelDefinitionAddedLive) {
  LiveRun run({"--engine", GetParam()});
  ASSERT_EQ(run.program_line(), "ready\n") << run.diagnostics();
  ASSERT_TRUE(run.connect_socket()) << run.diagnostics();
  const Reply bad = run.request(fmt::format("add p:xprobe_live/bad {}:live_work nosuchvar", LIVE_CALLS_PATH));
  EXPECT_EQ(bad.error, EINVAL);
  EXPECT_NE(bad.text.find("nosuchvar"), std::string::npos) << bad.text;
  const Reply added = run.request(fmt::format("add p:xprobe_live/work {}:live_work phase call", LIVE_CALLS_PATH));
  ASSERT_TRUE(added.ok) << added.text;
  const std::string listed = run.request("list").text;
  EXPECT_EQ(listed.rfind(fmt::format("p:xprobe_live/work {}:0x", LIVE_CALLS_PATH), 0), 0u) << listed;
  EXPECT_EQ(std::count(listed.begin(), listed.end(), '\n'), 1) << listed;
  ASSERT_TRUE(run.request("enable xprobe_live/work").ok);
  ASSERT_EQ(run.phase(), 1);
  ASSERT_TRUE(run.request("disable xprobe_live/work").ok);
  ASSERT_TRUE(run.request("remove xprobe_live/work").ok);
  ASSERT_EQ(run.phase(), 2);
  EXPECT_EQ(run.finish(), untraced(2).exit_status) << run.diagnostics();
  expect_enabled_phases_only(calls_by_phase(run.trace()), {1}, 2);
}

INSTANTIATE_TEST_SUITE_P(Engines, LiveControl, ::testing::Values("trap", "jump"));

}  // namespace
}  // namespace xprobe::testing
