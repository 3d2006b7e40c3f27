#include "torture_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace xprobe::torture {
namespace {

std::string fresh_dir(const std::string& name) {
  static int counter = 0;
  const char* base = std::getenv("TMPDIR");
  std::string dir = fmt::format("{}/xprobe-torture-{}-{}-{}", base != nullptr ? base : "/tmp", getpid(), ++counter, name);
  mkdir(dir.c_str(), 0755);
  return dir;
}

void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

pid_t start(const std::vector<std::string>& argv, const std::string& cwd, const std::string& in, const std::string& out,
            const std::string& err, const std::map<std::string, std::string>& env = {}) {
  const pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    const int in_fd = open(in.c_str(), O_RDONLY);
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<char*> raw;
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    execvp(raw[0], raw.data());
    _exit(127);
  }
  setpgid(child, child);
  return child;
}

int wait_with_timeout(pid_t child, int timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-child, SIGKILL);
      waitpid(child, &status, 0);
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::string& in, const std::string& out,
          const std::string& err, int timeout_s, const std::map<std::string, std::string>& env = {}) {
  return wait_with_timeout(start(argv, cwd, in, out, err, env), timeout_s);
}

}  // namespace

void become_subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

int wait_for(pid_t pid, int timeout_s) { return wait_with_timeout(pid, timeout_s); }

void reap_zombies() {
  int status = 0;
  while (waitpid(-1, &status, WNOHANG) > 0) {
  }
}

StartedWorkload start_workload(const Workload& workload, const std::vector<std::string>& prefix) {
  StartedWorkload started;
  started.run.workdir = fresh_dir(workload.name);
  for (const auto& [name, contents] : workload.inputs) write_file(started.run.workdir + "/" + name, contents);
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), workload.argv.begin(), workload.argv.end());
  started.out_path = started.run.workdir + ".stdout";
  started.err_path = started.run.workdir + ".stderr";
  const std::string in = workload.stdin_file.empty() ? "/dev/null" : started.run.workdir + "/" + workload.stdin_file;
  started.pid = start(argv, started.run.workdir, in, started.out_path, started.err_path, workload.env);
  return started;
}

WorkloadRun finish_workload(const Workload& workload, StartedWorkload& started, int timeout_s) {
  WorkloadRun run = started.run;
  run.status = wait_with_timeout(started.pid, timeout_s);
  run.out = read_file(started.out_path);
  run.err = read_file(started.err_path);
  for (const std::string& name : workload.outputs) {
    const std::string path = run.workdir + "/" + name;
    struct stat st{};
    run.files[name] = stat(path.c_str(), &st) == 0 ? read_file(path) : "<missing>";
  }
  return run;
}

std::string xprobe_path() { return XPROBE_PATH; }

bool full_run() {
  const char* full = std::getenv("XPROBE_TORTURE_FULL");
  return full != nullptr && std::string(full) == "1";
}

void record_summary(const std::string& workload, const std::string& line) {
  const std::string text = fmt::format("{:<28} {}\n", workload, line);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (const char* path = std::getenv("XPROBE_TORTURE_SUMMARY")) {
    std::ofstream out(path, std::ios::app);
    out << text;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string temp_file(const std::string& name, const std::string& contents) {
  const std::string path = fresh_dir("file") + "/" + name;
  write_file(path, contents);
  return path;
}

uint64_t count_lines_with(const std::string& text, const std::string& needle) {
  uint64_t n = 0;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line))
    if (line.find(needle) != std::string::npos) ++n;
  return n;
}

WorkloadRun run_workload(const Workload& workload, const std::vector<std::string>& prefix, int timeout_s) {
  StartedWorkload started = start_workload(workload, prefix);
  return finish_workload(workload, started, timeout_s);
}

WorkloadRun run_command(const std::vector<std::string>& argv, int timeout_s, const std::string& stdin_path) {
  WorkloadRun run;
  run.workdir = fresh_dir("cmd");
  const std::string out = run.workdir + "/stdout", err = run.workdir + "/stderr";
  run.status = spawn(argv, "", stdin_path, out, err, timeout_s);
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

XprobeStderr split_stderr(const std::string& err) {
  XprobeStderr split;
  // RECORDED and MISSED apart; hits are their sum. UNWOUND (calls given up) is not a hit.
  static const std::regex header(R"(^EVENT +RECORDED +MISSED +(UNWOUND +)?PROBE POINT$)");
  static const std::regex row(R"(^(\S+) +(\d+) +(\d+)(?: +\d+)?  (.*)$)");
  static const std::regex total(R"(^total +(\d+) +(\d+)(?: +\d+)?$)");
  static const std::regex dropped(R"(^dropped events: (\d+)$)");
  std::istringstream lines(err);
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, header)) {
      in_table = true;
      split.has_summary = true;
      continue;
    }
    if (in_table) {
      if (std::regex_match(line, m, total)) {
        split.total_misses = std::stoull(m[2]);
        split.total_hits = std::stoull(m[1]) + split.total_misses;
        continue;
      }
      if (std::regex_match(line, m, dropped)) {
        split.dropped = std::stoull(m[1]);
        continue;
      }
      if (std::regex_match(line, m, row)) {
        split.rows.push_back({m[1], std::stoull(m[2]) + std::stoull(m[3]), std::stoull(m[3])});
        continue;
      }
    }
    if (line.rfind("xprobe", 0) == 0) {
      split.xprobe_lines.push_back(line);
      continue;
    }
    if (!in_table) split.program_err += line + "\n";
  }
  // A program's stderr that does not end in a newline got one added above; undo that.
  if (!err.empty() && err.back() != '\n' && !split.program_err.empty() && split.xprobe_lines.empty() && !split.has_summary)
    split.program_err.pop_back();
  return split;
}

Refusals refusals_in(const std::vector<std::string>& xprobe_lines, const std::vector<std::string>& definitions) {
  Refusals refusals;
  std::set<std::string> known(definitions.begin(), definitions.end());
  for (const std::string& line : xprobe_lines) {
    // "xprobe: DEF: Could not insert probe at address 0x... due to: REASON"
    const std::string prefix = "xprobe: ";
    if (line.rfind(prefix, 0) != 0) continue;
    std::string definition;
    for (const std::string& candidate : known)
      if (line.compare(prefix.size(), candidate.size() + 2, candidate + ": ") == 0 &&
          candidate.size() > definition.size())
        definition = candidate;
    if (definition.empty()) continue;
    std::string reason = line.substr(prefix.size() + definition.size() + 2);
    const size_t due = reason.find("due to: ");
    if (due != std::string::npos) reason = reason.substr(due + 8);
    // Group by the words before the first hex byte or address.
    static const std::regex specifics(R"((: )?([0-9a-f]{2}( |$))+.*$|0x[0-9a-f]+.*$)");
    reason = std::regex_replace(reason, specifics, "");
    while (!reason.empty() && (reason.back() == ' ' || reason.back() == ':' || reason.back() == ',')) reason.pop_back();
    ++refusals.by_reason[reason];
    refusals.definitions.push_back(definition);
  }
  return refusals;
}

std::map<std::string, uint64_t> dynsym_functions(const std::string& path) {
  // readelf, not nm: nm's "W" covers weak objects and untyped symbols (data_start) too.
  std::map<std::string, uint64_t> functions;
  const auto readelf = run_command({"readelf", "--dyn-syms", "-W", path}, 60);
  std::istringstream lines(readelf.out);
  std::string line;
  while (std::getline(lines, line)) {
    // "   Num:    Value          Size Type    Bind   Vis      Ndx Name"
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (num.empty() || num.back() != ':' || (type != "FUNC" && type != "IFUNC") || ndx == "UND") continue;
    const size_t at = name.find('@');
    if (at != std::string::npos) name.resize(at);
    functions.emplace(name, std::stoull(value, nullptr, 16));
  }
  return functions;
}

std::vector<uint64_t> instruction_offsets(const std::string& path, const std::string& symbol, uint64_t symbol_value) {
  std::vector<uint64_t> offsets;
  const auto decoded = run_command({xprobe_path(), "decode", path, symbol}, 60);
  std::istringstream lines(decoded.out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    if (line.find("\tbad") != std::string::npos) break;  // nothing after an undecodable byte is a boundary we trust
    const uint64_t address = std::stoull(line.substr(0, tab), nullptr, 16);
    if (address >= symbol_value) offsets.push_back(address - symbol_value);
  }
  return offsets;
}

int code_byte(pid_t pid, const std::string& object_path, const std::string& symbol) {
  static std::map<std::pair<std::string, std::string>, uint64_t> values;
  auto key = std::make_pair(object_path, symbol);
  if (!values.count(key)) {
    const auto functions = dynsym_functions(object_path);
    auto it = functions.find(symbol);
    if (it == functions.end()) return -1;
    values[key] = it->second;
  }
  char resolved[PATH_MAX];
  const std::string real = realpath(object_path.c_str(), resolved) != nullptr ? resolved : object_path;
  // The mapping with file offset 0 of the object: its start is the load bias (PIC objects).
  std::istringstream maps(read_file(fmt::format("/proc/{}/maps", pid)));
  std::string line;
  uint64_t bias = 0;
  bool found = false;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    if (!(fields >> range >> perms >> offset >> dev >> inode >> path)) continue;
    if (path != real || std::stoull(offset, nullptr, 16) != 0) continue;
    bias = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    found = true;
    break;
  }
  if (!found) return -1;
  return process_byte(pid, bias + values[key]);
}

int process_byte(pid_t pid, uint64_t address) {
  const int fd = open(fmt::format("/proc/{}/mem", pid).c_str(), O_RDONLY);
  if (fd < 0) return -1;
  unsigned char byte = 0;
  const ssize_t got = pread(fd, &byte, 1, static_cast<off_t>(address));
  close(fd);
  return got == 1 ? byte : -1;
}

bool wait_until_planted(pid_t pid, const std::string& object_path, const std::string& symbol, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    const char state = process_state(pid);
    if (state == 0 || state == 'Z') return false;
    const int first = code_byte(pid, object_path, symbol);
    if (first == kTrapBreakpointByte || first == 0xe9) return true;  // a breakpoint, or a jump-optimized probe's jmp
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool wait_for_exec(pid_t pid, const std::string& path, int timeout_ms) {
  char resolved[PATH_MAX];
  const std::string real = realpath(path.c_str(), resolved) != nullptr ? resolved : path;
  for (int waited = 0; waited < timeout_ms; waited += 2) {
    char exe[PATH_MAX];
    const ssize_t n = readlink(fmt::format("/proc/{}/exe", pid).c_str(), exe, sizeof exe - 1);
    if (n > 0 && std::string(exe, static_cast<size_t>(n)) == real) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

char process_state(pid_t pid) {
  const std::string stat = read_file(fmt::format("/proc/{}/stat", pid));
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return 0;
  return stat[close + 2];
}

pid_t tracer_of(pid_t pid) {
  const std::string status = read_file(fmt::format("/proc/{}/status", pid));
  const size_t at = status.find("TracerPid:");
  if (at == std::string::npos) return -1;
  return static_cast<pid_t>(std::atoi(status.c_str() + at + 10));
}

namespace {

struct ProcessEntry {
  pid_t pid;
  char state;
  std::string comm;
};

// Every process whose parent is `parent`, from /proc/PID/stat.
std::vector<ProcessEntry> children_of_parent(pid_t parent) {
  std::vector<ProcessEntry> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    const std::string stat = read_file(fmt::format("/proc/{}/stat", pid));
    const size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2 || ppid != parent) continue;
    found.push_back({pid, state, stat.substr(open + 1, close - open - 1)});
  }
  closedir(proc);
  return found;
}

}  // namespace

std::vector<pid_t> children_by_ppid(pid_t parent) {
  std::vector<pid_t> found;
  for (const ProcessEntry& child : children_of_parent(parent)) found.push_back(child.pid);
  return found;
}

std::vector<std::string> stopped_or_zombie_children(pid_t parent) {
  std::vector<std::string> found;
  for (const ProcessEntry& child : children_of_parent(parent))
    if (child.state == 'T' || child.state == 't' || child.state == 'Z')
      found.push_back(fmt::format("{} {} {}", child.pid, child.state, child.comm));
  return found;
}

}  // namespace xprobe::torture
