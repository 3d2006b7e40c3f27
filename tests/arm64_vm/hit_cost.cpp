// Issue 12's per-hit costs, measured inside the AArch64 VM side by side in one run: the
// kernel's own uprobes, xprobe's breakpoint engine through its library API (the trap engine
// alone: no fetch programs, no event formatting) and the `xprobe trace` command given the
// kernel's definitions unchanged (events formatted into a file), on the same workload
// (bench/workload/work_bench.c, cross-built): an entry probe on work(a, b), entry and return,
// and a string argument of work_str(s). The jump engine has no AArch64 back end yet. Each
// case runs the workload's timed loop; per hit = loop time / calls (untraced shown too).
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
#include "probe/engine/trap_engine.h"
#include "target/process.h"

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

// The trap engine with an entry probe (and a return probe, and a string read) on `function`.
long run_trap_engine(const std::vector<std::string>& argv, const std::string& timing, uint64_t link,
                     bool position_independent, bool with_return, bool read_string) {
  auto process = target::Process::launch(argv);
  if (!process) return -1;
  probe::engine::TrapEngine engine(**process);
  auto maps = (*process)->maps();
  uint64_t base = 0;
  for (const auto& entry : *maps) {
    if (entry.path == argv[0] && entry.offset == 0) {
      base = entry.start;
      break;
    }
  }
  uint64_t fetched = 0;
  probe::engine::ProbeSpec entry;
  entry.address = position_independent ? base + link : link;
  entry.on_hit = [&](const probe::engine::HitContext& hit) {
    if (!read_string) return;
    uint8_t text[64];
    if (hit.memory.read(hit.registers.raw.regs[0], text)) ++fetched;
  };
  if (!engine.add_probe(entry)) return -1;
  if (with_return) {
    probe::engine::ProbeSpec ret;
    ret.address = entry.address;
    ret.is_return = true;
    ret.on_return = [&](const probe::engine::ReturnContext&) {};
    if (!engine.add_probe(ret)) return -1;
  }
  auto result = engine.run();
  if (!result || result->end != probe::engine::RunEnd::Exited || result->exit_status != 0) return -1;
  return loop_ns_of(timing);
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
long run_xprobe_command(const std::string& xprobe, const std::vector<std::string>& argv, const std::string& timing,
                        const std::vector<std::string>& definitions) {
  std::vector<std::string> command = {xprobe, "trace", "-o", "/tmp/arm64_hit_cost.events"};
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
    bool with_return;
  };
  const std::vector<Case> cases = {
      {"entry", false, {"p:costs/entry " + at_work + " a=%x0 b=%x1"}, false},
      {"entry+return", false, {"p:costs/entry " + at_work + " a=%x0 b=%x1", "r:costs/ret " + at_work + " rv=%x0"}, true},
      {"string", true, {"p:costs/str " + at_work_str + " s=+0(%x0):string"}, false},
  };
  std::printf("%-14s %14s %14s %14s %14s %10s %10s\n", "ns/hit", "untraced", "kernel uprobe", "trap engine", "xprobe trace",
              "trap/kern", "trace/kern");
  int status = 0;
  for (const Case& c : cases) {
    const auto args = workload(bench, calls, c.str, timing);
    const long untraced = run_untraced(args, timing);
    const long kernel = run_kernel(args, timing, *tracefs, c.kernel);
    const uint64_t link = link_address(*file, c.str ? "work_str" : "work");
    const long trap = run_trap_engine(args, timing, link, file->position_independent(), c.with_return, c.str);
    const long command = run_xprobe_command(xprobe_path, args, timing, c.kernel);
    if (untraced < 0 || kernel < 0 || trap < 0 || command < 0) status = 1;
    const double per = static_cast<double>(calls);
    auto per_hit = [&](long ns) { return static_cast<double>(ns) / per; };
    auto ratio = [&](long ns) { return kernel > 0 ? static_cast<double>(ns) / static_cast<double>(kernel) : 0.0; };
    std::printf("%-14s %14.0f %14.0f %14.0f %14.0f %9.2fx %9.2fx\n", c.name, per_hit(untraced), per_hit(kernel),
                per_hit(trap), per_hit(command), ratio(trap), ratio(command));
  }
  return status;
}
