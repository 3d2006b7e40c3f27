// Every kind of path a user can give xprobe, through the real binary: a directory, a FIFO, a
// socket, a device, an unreadable file, truncated and corrupt ELF files, a symlink loop, a
// file replaced while the traced program runs. Each must end in one line naming the path and
// the problem, with a non-zero status that is xprobe's own (never 134, an abort).
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "run_command.h"

namespace {

class BadPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/xprobe-bad-paths-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (socket_fd_ >= 0) close(socket_fd_);
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  void write_file(const std::string& name, const std::string& bytes, mode_t mode = 0644) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    chmod(path(name).c_str(), mode);
  }

  static std::string file_bytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::string make_socket() {
    socket_fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string name = path("socket");
    std::copy(name.begin(), name.end(), address.sun_path);
    EXPECT_EQ(bind(socket_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return name;
  }

  std::string dir_;
  int socket_fd_ = -1;
};

// One line, naming `needle` (the path) and `reason`; xprobe's own failing status.
void expect_one_clear_line(const std::string& command, const std::string& needle, const std::string& reason) {
  SCOPED_TRACE(command);
  const CommandResult result = run_command("timeout 20 " + command);
  EXPECT_NE(result.exit_status, 0) << result.out;
  EXPECT_LT(result.exit_status, 124) << "killed, timed out or aborted: " << result.out;
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1) << result.out;
  EXPECT_NE(result.out.find(needle), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(reason), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("terminate"), std::string::npos) << result.out;
}

std::string trace_place(const std::string& binary) {
  return fmt::format("{} trace -e 'p {}:0x100' -- /bin/true", XPROBE_PATH, binary);
}

TEST_F(BadPaths, ADirectoryAsBinaryDefinitionsFileOrProgram) {
  expect_one_clear_line(trace_place("/sys"), "/sys", "is a directory");
  expect_one_clear_line(fmt::format("{} trace -e 'p /sys:100' -- /bin/true", XPROBE_PATH), "/sys", "is a directory");
  expect_one_clear_line(fmt::format("{} trace -f /sys -- /bin/true", XPROBE_PATH), "/sys", "is a directory");
  expect_one_clear_line(fmt::format("{} check /sys main", XPROBE_PATH), "/sys", "is a directory");
  expect_one_clear_line(fmt::format("{} decode /sys", XPROBE_PATH), "/sys", "is a directory");
  expect_one_clear_line(fmt::format("{} decode --raw /sys", XPROBE_PATH), "/sys", "is a directory");
}

TEST_F(BadPaths, AFifoASocketAndDevices) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0644), 0);
  // Without O_NONBLOCK, opening a FIFO nobody writes would wait forever (the timeout says so).
  expect_one_clear_line(trace_place(path("fifo")), path("fifo"), "is a FIFO");
  expect_one_clear_line(fmt::format("{} trace -f {} -- /bin/true", XPROBE_PATH, path("fifo")), path("fifo"), "is a FIFO");
  const std::string socket_path = make_socket();
  expect_one_clear_line(trace_place(socket_path), socket_path, "No such device or address");
  // /dev/zero would never end; /dev/null is empty.
  expect_one_clear_line(trace_place("/dev/zero"), "/dev/zero", "is a character device");
  expect_one_clear_line(trace_place("/dev/null"), "/dev/null", "is a character device");
  expect_one_clear_line(fmt::format("{} decode --raw /dev/zero", XPROBE_PATH), "/dev/zero", "is a character device");
}

TEST_F(BadPaths, AnUnreadableFile) {
  write_file("secret", file_bytes("/bin/true"), 0600);
  chmod(dir_.c_str(), 0755);
  // Root reads every file: drop to nobody for this one (setpriv, util-linux).
  if (geteuid() == 0) {
    expect_one_clear_line(fmt::format("setpriv --reuid=65534 --regid=65534 --clear-groups {}", trace_place(path("secret"))),
                          path("secret"), "Permission denied");
  } else {
    expect_one_clear_line(trace_place(path("secret")), path("secret"), "Permission denied");
  }
  expect_one_clear_line(trace_place(path("missing")), path("missing"), "No such file or directory");
}

TEST_F(BadPaths, TruncatedAndCorruptElfFiles) {
  const std::string elf = file_bytes("/bin/true");
  ASSERT_GT(elf.size(), 4096u);
  write_file("empty", "");
  write_file("magic_only", elf.substr(0, 4));
  write_file("header_cut", elf.substr(0, 40));
  write_file("truncated", elf.substr(0, 4096));
  std::string corrupt = elf;
  // Section headers far outside the file, and a program header count that does not fit.
  corrupt[0x28] = '\xff'; corrupt[0x29] = '\xff'; corrupt[0x2a] = '\xff'; corrupt[0x2b] = '\x7f';
  corrupt[0x38] = '\xff'; corrupt[0x39] = '\xff';
  write_file("corrupt", corrupt);
  write_file("text", "#!/bin/sh\necho not an ELF\n", 0755);
  for (const char* name : {"empty", "magic_only", "header_cut", "text"}) {
    expect_one_clear_line(trace_place(path(name)), path(name), "ELF");
  }
  for (const char* name : {"truncated", "corrupt"}) {
    SCOPED_TRACE(name);
    // Readable enough to open, or refused as invalid: either way one line, no abort. Offset
    // 0x100 is inside every one of them, so a refusal names the place or the file.
    const CommandResult result = run_command("timeout 20 " + trace_place(path(name)));
    EXPECT_NE(result.exit_status, 0) << result.out;
    EXPECT_LT(result.exit_status, 124) << result.out;
    EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1) << result.out;
    EXPECT_NE(result.out.find(path(name)), std::string::npos) << result.out;
  }
}

TEST_F(BadPaths, ASymlinkLoop) {
  ASSERT_EQ(symlink(path("b").c_str(), path("a").c_str()), 0);
  ASSERT_EQ(symlink(path("a").c_str(), path("b").c_str()), 0);
  expect_one_clear_line(trace_place(path("a")), path("a"), "Too many levels of symbolic links");
  expect_one_clear_line(fmt::format("{} trace -f {} -- /bin/true", XPROBE_PATH, path("a")), path("a"),
                        "Too many levels of symbolic links");
}

// The executable of a running program replaced on disk (renamed over, as package upgrades do)
// by a truncated copy: attaching with a probe on that path reads the new file and says it is
// not a usable ELF object.
TEST_F(BadPaths, AFileReplacedWhileTheProgramRuns) {
  write_file("sleeper", file_bytes("/bin/sleep"), 0755);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl(path("sleeper").c_str(), "sleeper", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  usleep(200 * 1000);
  write_file("sleeper.new", file_bytes("/bin/sleep").substr(0, 64), 0755);
  ASSERT_EQ(rename(path("sleeper.new").c_str(), path("sleeper").c_str()), 0);
  expect_one_clear_line(fmt::format("{} trace -p {} -e 'p {}:0x100'", XPROBE_PATH, child, path("sleeper")),
                        path("sleeper"), "ELF");
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
