// Bad input to `xprobe trace`: targets that cannot be traced and binaries that cannot be
// probed. Each must give one clear line on stderr and a non-zero exit, and harm nothing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "torture_support.h"

namespace xprobe::torture {
namespace {

std::string program(const std::string& name) { return std::string(TORTURE_PROGRAMS_DIR) + "/" + name; }

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// One line naming `expected`, non-zero exit, and the program (if one was given) never ran.
void expect_one_line_error(const WorkloadRun& run, const std::string& expected, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_NE(run.status, 0) << run.err;
  EXPECT_NE(run.status, -2) << "timed out";
  const auto lines = non_empty_lines(run.err);
  EXPECT_EQ(lines.size(), 1u) << run.err;
  EXPECT_NE(run.err.find(expected), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << "the program ran: " << run.out;
}

WorkloadRun xprobe(const std::vector<std::string>& args) {
  std::vector<std::string> argv{xprobe_path(), "trace", "-o", "/dev/null"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, 60);
}

TEST(BadInput, AttachToAPidThatDoesNotExist) {
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  expect_one_line_error(xprobe({"-p", std::to_string(gone), "-e", "p main"}), std::to_string(gone), "reaped pid");
  expect_one_line_error(xprobe({"-p", "999999999", "-e", "p main"}), "no such process", "out of range pid");
}

TEST(BadInput, AttachToAnotherUsersProcessIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run xprobe as another user (setpriv)";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv (util-linux) not installed";
  // Our own process, traced by xprobe running as nobody: ptrace must refuse.
  const pid_t victim = fork();
  if (victim == 0) {
    execl("/bin/sleep", "sleep", "30", (char*)nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto run = run_command({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", xprobe_path(),
                                "trace", "-o", "/dev/null", "-p", std::to_string(victim), "-e", "p libc.so.6:nanosleep"},
                               60);
  if (run.status == 127 || run.err.find("Permission denied") != std::string::npos)
    GTEST_SKIP() << "nobody cannot execute " << xprobe_path() << ": " << run.err;
  expect_one_line_error(run, "not permitted", "another user's process");
  // The line names the cause and what to change.
  EXPECT_NE(run.err.find("another user"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("CAP_SYS_PTRACE"), std::string::npos) << run.err;
  EXPECT_EQ(process_state(victim), 'S') << "the refused target must be untouched";
  EXPECT_EQ(tracer_of(victim), 0);
  kill(victim, SIGKILL);
  waitpid(victim, nullptr, 0);
}

TEST(BadInput, AttachToItselfAZombieAndAKernelThread) {
  expect_one_line_error(run_command({"/bin/sh", "-c", fmt::format("exec {} trace -o /dev/null -p $$ -e 'p main'", xprobe_path())}, 60),
                        "cannot trace itself", "itself");
  const pid_t zombie = fork();
  if (zombie == 0) _exit(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(process_state(zombie), 'Z');
  expect_one_line_error(xprobe({"-p", std::to_string(zombie), "-e", "p main"}), "zombie", "zombie");
  EXPECT_EQ(process_state(zombie), 'Z');
  waitpid(zombie, nullptr, 0);
  // pid 2 is kthreadd wherever the kernel's threads are visible; never pid 1.
  if (read_file("/proc/2/comm") == "kthreadd\n")
    expect_one_line_error(xprobe({"-p", "2", "-e", "p main"}), "kernel thread", "kthreadd");
}

TEST(BadInput, ProgramThatDoesNotExistOrIsNotExecutableElf) {
  expect_one_line_error(xprobe({"-e", "p main", "--", "/nonexistent/program"}), "/nonexistent/program", "missing program");
  const std::string not_elf = temp_file("not_elf", "hello, I am text\n");
  chmod(not_elf.c_str(), 0755);
  expect_one_line_error(xprobe({"-e", "p main", "--", not_elf}), "Exec format error", "text file");
}

TEST(BadInput, StrippedBinaryHasNoSymbolToProbe) {
  const std::string stripped = temp_file("stripped_flood", read_file(program("flood")));
  ASSERT_EQ(run_command({"strip", "--strip-all", stripped}, 60).status, 0);
  chmod(stripped.c_str(), 0755);
  expect_one_line_error(xprobe({"-e", "p hit_a", "--", stripped}), "no function named 'hit_a'", "stripped");
  // Debian's gzip: stripped, and its .dynsym holds no function of its own.
  expect_one_line_error(xprobe({"-e", "p /usr/bin/gzip:main", "--", "/usr/bin/gzip"}), "no function named 'main'", "gzip");
}

TEST(BadInput, ProbeOnAMissingBinary) {
  expect_one_line_error(xprobe({"-e", "p /nonexistent/lib.so:foo", "--", program("flood"), "10"}), "/nonexistent/lib.so",
                        "see torture-findings #4");
}

TEST(BadInput, ProbeOnABinaryThatIsNotElf) {
  const std::string not_elf = temp_file("not_elf.so", "hello, I am text\n");
  expect_one_line_error(xprobe({"-e", fmt::format("p {}:main", not_elf), "--", program("flood"), "10"}), "not an ELF",
                        "see torture-findings #4");
}

TEST(BadInput, ProbeOnABinaryOfAnotherArchitecture) {
  const std::string arm64 = "/usr/aarch64-linux-gnu/lib/libc.so.6";
  if (access(arm64.c_str(), R_OK) != 0) GTEST_SKIP() << "libc6-arm64-cross not installed";
  const auto run = xprobe({"-e", fmt::format("p {}:malloc", arm64), "--", program("flood"), "10"});
  expect_one_line_error(run, arm64, "see torture-findings #4");
  EXPECT_TRUE(run.err.find("AArch64") != std::string::npos || run.err.find("aarch64") != std::string::npos ||
              run.err.find("architecture") != std::string::npos)
      << run.err;
}

TEST(BadInput, LibraryNamedBySonameOrSymlinkGetsItsProbes) {
  // See torture-findings #2. The kernel resolves a path to its inode; `ldd` shows the soname.
  if (access("/usr/bin/sqlite3", X_OK) != 0) GTEST_SKIP() << "sqlite3 not installed";
  const std::string script = temp_file("one.sql", "select 1;\n");
  for (const std::string binary : {"libsqlite3.so.0", "/lib/x86_64-linux-gnu/libsqlite3.so.0"}) {
    const auto run = run_command({xprobe_path(), "trace", "--summary", "-o", "/dev/null", "-e",
                                  fmt::format("p:x/step {}:sqlite3_step", binary), "--", "/usr/bin/sqlite3"},
                                 60, script);
    EXPECT_EQ(run.status, 0) << run.err;
    const XprobeStderr split = split_stderr(run.err);
    ASSERT_EQ(split.rows.size(), 1u) << binary << ": no probe planted and nothing said:\n" << run.err;
    EXPECT_GT(split.rows.front().hits, 0u) << binary;
  }
}

TEST(BadInput, ProgramArgumentsWithDashesReachTheProgram) {
  // See torture-findings #1: everything after "--" is the program's.
  const auto run = run_command({xprobe_path(), "trace", "-o", "/dev/null", "-e", "p:x/w libc.so.6:write", "--", "/bin/echo", "-n", "hi"}, 60);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "hi");
}

// As an ordinary user (nobody, through setpriv): xprobe launches and traces the user's own
// program, and attaches to the user's own running one (this kernel has no Yama, or it allows
// that): the program's output as untraced, every hit counted.
const std::vector<std::string> kAsNobody{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};

bool can_run_as_nobody(std::string& why) {
  if (geteuid() != 0) why = "needs root to run xprobe as another user (setpriv)";
  else if (access("/usr/bin/setpriv", X_OK) != 0) why = "setpriv (util-linux) not installed";
  else {
    const auto probe = run_command({kAsNobody[0], kAsNobody[1], kAsNobody[2], kAsNobody[3], xprobe_path(), "--help"}, 30);
    if (probe.status != 0) why = "nobody cannot run " + xprobe_path() + ": " + probe.err;
  }
  return why.empty();
}

int yama_ptrace_scope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  return in >> scope ? scope : -1;
}

WorkloadRun attach_as_nobody_to_own_program(WorkloadRun& program_run) {
  Workload sealed;
  sealed.name = "sealed-nobody";
  sealed.argv = kAsNobody;
  sealed.argv.insert(sealed.argv.end(), {program("sealed"), "none", "150000"});
  StartedWorkload running = start_workload(sealed, {});
  EXPECT_TRUE(wait_for_exec(running.pid, program("sealed"), 10000));
  std::vector<std::string> argv = kAsNobody;
  argv.insert(argv.end(), {xprobe_path(), "trace", "--summary", "-o", "/dev/null", "-p", std::to_string(running.pid), "-e",
                           "p:f/work work x=%di:s64"});
  const WorkloadRun attached = run_command(argv, 120);
  program_run = finish_workload(sealed, running, 120);
  return attached;
}

TEST(Permissions, AnOrdinaryUserTracesItsOwnChildAndAttachesToItsOwnProcess) {
  std::string why;
  if (!can_run_as_nobody(why)) GTEST_SKIP() << why;
  const WorkloadRun untraced = run_command({program("sealed"), "none", "2000"}, 60);
  ASSERT_EQ(untraced.status, 0);
  std::vector<std::string> launch = kAsNobody;
  launch.insert(launch.end(), {xprobe_path(), "trace", "--summary", "-o", "/dev/null", "-e", "p:f/work work x=%di:s64",
                               "-e", "r:f/work_r work rv=$retval:s64", "--", program("sealed"), "none", "2000"});
  const WorkloadRun launched = run_command(launch, 120);
  EXPECT_EQ(launched.status, 0) << launched.err;
  EXPECT_EQ(launched.out, untraced.out);
  EXPECT_EQ(split_stderr(launched.err).total_hits, 4000u) << launched.err;

  const int scope = yama_ptrace_scope();
  if (scope >= 1) GTEST_SKIP() << "kernel.yama.ptrace_scope is " << scope << ": attaching to an own process is forbidden here";
  const WorkloadRun alone = run_command({program("sealed"), "none", "150000"}, 60);
  WorkloadRun program_run;
  const WorkloadRun attached = attach_as_nobody_to_own_program(program_run);
  EXPECT_EQ(attached.status, 0) << attached.err;
  EXPECT_GT(split_stderr(attached.err).total_hits, 0u) << attached.err;
  EXPECT_EQ(program_run.status, 0);
  EXPECT_EQ(program_run.out, alone.out);
}

// kernel.yama.ptrace_scope=1 (set for the test, restored after): an ordinary user's attach to
// its own running process is refused in one line naming the setting, the program unharmed.
TEST(Permissions, YamaPtraceScopeRefusalNamesTheSetting) {
  std::string why;
  if (!can_run_as_nobody(why)) GTEST_SKIP() << why;
  const int scope = yama_ptrace_scope();
  if (scope < 0) GTEST_SKIP() << "this kernel has no Yama LSM (/proc/sys/kernel/yama/ptrace_scope absent): nothing to refuse";
  auto set_scope = [](int value) {
    std::ofstream out("/proc/sys/kernel/yama/ptrace_scope");
    out << value;
    return static_cast<bool>(out.flush());
  };
  if (scope != 1 && !set_scope(1)) GTEST_SKIP() << "cannot set kernel.yama.ptrace_scope";
  const WorkloadRun alone = run_command({program("sealed"), "none", "150000"}, 60);
  WorkloadRun program_run;
  const WorkloadRun attached = attach_as_nobody_to_own_program(program_run);
  if (scope != 1) set_scope(scope);
  expect_one_line_error(attached, "kernel.yama.ptrace_scope", "yama");
  EXPECT_EQ(program_run.status, 0);
  EXPECT_EQ(program_run.out, alone.out);
}

}  // namespace
}  // namespace xprobe::torture
