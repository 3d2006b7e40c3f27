// Issue 12's per-hit costs, measured inside the AArch64 VM side by side in one run: the
// kernel's own uprobes and the `xprobe trace` command given the kernel's definitions
// unchanged (events formatted into a file), once with --engine trap
// (breakpoints) and once with --engine jump (a B to a trampoline and the in-process agent), on
// the same workload (bench/workload/work_bench.c, cross-built): an entry probe on work(a, b),
// entry and return, and a string argument of work_str(s). Each case runs the workload's timed
// loop; per hit = loop time / calls (untraced shown too).
//
// usage (inside the VM): arm64_hit_cost WORK_BENCH CALLS XPROBE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "elf/elf_file.h"
#include "kernel_tracefs.h"

namespace {

using namespace xprobe;

// Runs the workload (stdout to /dev/null) and returns its loop time in ns, -1 on failure.
long loop_ns_of(const std::string& timing) {
  std::ifstream in(timing);
  std::string line;
  std::getline(in, line);
  const auto at = line.find("loop_ns=");
  return at == std::string::npos ? -1 : std::stol(line.substr(at + 8));
}

std::vector<std::string> workload(const std::string& bench, long calls, bool str, const std::string& timing) {
  std::vector<std::string> argv = {bench, "--timing", timing};
  if (str) argv.push_back("--str");
  argv.push_back(std::to_string(calls));
  return argv;
}

long run_untraced(const std::vector<std::string>& argv, const std::string& timing) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? loop_ns_of(timing) : -1;
}

uint64_t link_address(const elf::ElfFile& file, const char* name) {
  const auto found = file.find_symbols(name);
  return found.empty() ? 0 : found[0]->address;
}

long run_kernel(const std::vector<std::string>& argv, const std::string& timing, testing::KernelTracefs& tracefs,
                const std::vector<std::string>& definitions) {
  for (const auto& definition : definitions) {
    int error = 0;
    if (!tracefs.define(definition, &error)) {
      std::fprintf(stderr, "cannot define %s: %s\n%s", definition.c_str(), std::strerror(error),
                   tracefs.error_log().c_str());
      return -1;
    }
  }
  tracefs.set_buffer_size_kb(4096);
  tracefs.enable_group("costs");
  const long ns = run_untraced(argv, timing);
  tracefs.enable_group("costs", false);
  // The kernel's own count of hits: a probe that never fired would make its cost look like none.
  std::ifstream profile(tracefs.root() + "/uprobe_profile");
  std::string line;
  while (std::getline(profile, line)) {
    if (line.find("work_bench") != std::string::npos)
      std::fprintf(stderr, "  kernel: %s\n", line.c_str());
  }
  tracefs.clear_trace();
  for (const auto& definition : definitions) tracefs.undefine(testing::defined_event(definition));
  return ns;
}

// `xprobe trace` with `definitions` (the kernel's, unchanged), events written to a file.
long run_xprobe_command(const std::string& xprobe, const char* engine, const std::vector<std::string>& argv,
                        const std::string& timing, const std::vector<std::string>& definitions) {
  std::vector<std::string> command = {xprobe, "trace", "--engine", engine, "-o", "/tmp/arm64_hit_cost.events"};
  for (const auto& definition : definitions) command.insert(command.end(), {"-e", definition});
  command.push_back("--");
  command.insert(command.end(), argv.begin(), argv.end());
  const long ns = run_untraced(command, timing);
  unlink("/tmp/arm64_hit_cost.events");
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: arm64_hit_cost WORK_BENCH CALLS XPROBE\n");
    return 2;
  }
  const std::string bench = argv[1];
  const long calls = std::stol(argv[2]);
  const std::string xprobe_path = argv[3];
  const std::string timing = "/tmp/arm64_hit_cost.timing";
  auto file = elf::ElfFile::open(bench);
  if (!file) {
    std::fprintf(stderr, "%s\n", file.error().message.c_str());
    return 1;
  }
  const auto work = file->address_to_file_offset(link_address(*file, "work"));
  const auto work_str = file->address_to_file_offset(link_address(*file, "work_str"));
  if (!work || !work_str) return 1;
  std::string why;
  auto tracefs = testing::KernelTracefs::open(&why);
  if (!tracefs) {
    std::fprintf(stderr, "no kernel uprobes: %s\n", why.c_str());
    return 1;
  }
  auto place = [&](uint64_t offset) {
    char hex[32];
    std::snprintf(hex, sizeof hex, ":0x%lx", static_cast<unsigned long>(offset));
    return bench + hex;
  };
  const std::string at_work = place(*work), at_work_str = place(*work_str);

  struct Case {
    const char* name;
    bool str;
    std::vector<std::string> kernel;
  };
  const std::vector<Case> cases = {
      {"entry", false, {"p:costs/entry " + at_work + " a=%x0 b=%x1"}},
      {"entry+return", false, {"p:costs/entry " + at_work + " a=%x0 b=%x1", "r:costs/ret " + at_work + " rv=%x0"}},
      {"string", true, {"p:costs/str " + at_work_str + " s=+0(%x0):string"}},
  };
  std::printf("%-14s %10s %10s %10s %10s %10s %10s\n", "ns/hit", "untraced", "kernel", "xp trap", "xp jump", "trap/kern",
              "jump/kern");
  int status = 0;
  for (const Case& c : cases) {
    const auto args = workload(bench, calls, c.str, timing);
    const long untraced = run_untraced(args, timing);
    const long kernel = run_kernel(args, timing, *tracefs, c.kernel);
    const long command = run_xprobe_command(xprobe_path, "trap", args, timing, c.kernel);
    const long jump = run_xprobe_command(xprobe_path, "jump", args, timing, c.kernel);
    if (untraced < 0 || kernel < 0 || command < 0 || jump < 0) status = 1;
    const double per = static_cast<double>(calls);
    auto per_hit = [&](long ns) { return static_cast<double>(ns) / per; };
    auto ratio = [&](long ns) { return kernel > 0 ? static_cast<double>(ns) / static_cast<double>(kernel) : 0.0; };
    std::printf("%-14s %10.0f %10.0f %10.0f %10.0f %9.2fx %9.2fx\n", c.name, per_hit(untraced), per_hit(kernel),
                per_hit(command), per_hit(jump), ratio(command), ratio(jump));
  }
  return status;
}
