#pragma once
// Shared machinery of the torture suite: fixed workloads of real programs run untraced and
// under `xprobe trace` in fresh work directories, the pieces of xprobe's stderr (its summary
// table, refusals) told apart from the program's own, symbol lists from binutils (independent
// of xprobe's ELF code), and /proc checks for stopped or zombie leftovers.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xprobe::torture {

std::string xprobe_path();
// `./run torture` sets XPROBE_TORTURE_FULL=1: bigger workloads, more probes, more cycles.
bool full_run();
// One line per workload for the run's summary (XPROBE_TORTURE_SUMMARY=FILE appends there).
void record_summary(const std::string& workload, const std::string& line);

struct Workload {
  std::string name;
  std::vector<std::string> argv;                 // run inside the work directory
  std::map<std::string, std::string> inputs;     // file name -> contents, written before each run
  std::vector<std::string> outputs;              // files compared after the run
  std::string stdin_file;                        // an input's name, or empty for /dev/null
  std::map<std::string, std::string> env;        // added to the environment
};

struct WorkloadRun {
  int status = -1;     // exit code, or 128 + signal; -2 on timeout
  std::string out, err;
  std::map<std::string, std::string> files;  // outputs; a missing one maps to "<missing>"
  std::string workdir;
};

// Runs `prefix + workload.argv` in a fresh directory; `prefix` is empty (untraced) or an
// xprobe command line ending in "--". Kills the whole process group after `timeout_s`.
WorkloadRun run_workload(const Workload& workload, const std::vector<std::string>& prefix, int timeout_s);

// Starts `prefix + workload.argv` in a fresh directory without waiting (own process group);
// finish_workload() waits for it (killing the group after `timeout_s`) and collects the run.
struct StartedWorkload {
  pid_t pid = -1;
  WorkloadRun run;
  std::string out_path, err_path;
};
StartedWorkload start_workload(const Workload& workload, const std::vector<std::string>& prefix);
WorkloadRun finish_workload(const Workload& workload, StartedWorkload& started, int timeout_s);

// This process becomes the reaper of orphaned descendants (a launched program whose xprobe
// exited), so that leftovers are visible as our children and can be waited for.
void become_subreaper();
// Waits for `pid` (a child or an adopted orphan) up to `timeout_s`; its exit code or 128 + signal,
// -2 on timeout (then it is killed).
int wait_for(pid_t pid, int timeout_s);
// Reaps every exited child that is not being waited for (adopted zombies).
void reap_zombies();

// Any argv in the current directory, stdout/stderr captured, with a timeout.
WorkloadRun run_command(const std::vector<std::string>& argv, int timeout_s, const std::string& stdin_path = "/dev/null");

// xprobe's stderr after the traced program's: its `--summary` table (from the "EVENT RECORDED MISSED"
// header on) and its own "xprobe..." lines. The program's part is what comes before.
struct XprobeStderr {
  std::string program_err;
  std::vector<std::string> xprobe_lines;  // "xprobe: ..." lines, in order
  struct Row {
    std::string event;  // GROUP/EVENT
    uint64_t hits = 0, misses = 0;
  };
  std::vector<Row> rows;
  bool has_summary = false;
  uint64_t total_hits = 0, total_misses = 0, dropped = 0;
};
XprobeStderr split_stderr(const std::string& err);

// Refusal lines ("xprobe: DEF: reason") grouped by a short reason ("Unknown instruction",
// "cannot probe the instruction f4", ...), and the definitions they name.
struct Refusals {
  std::map<std::string, size_t> by_reason;
  std::vector<std::string> definitions;
};
Refusals refusals_in(const std::vector<std::string>& xprobe_lines, const std::vector<std::string>& definitions);

// Function symbols (FUNC, IFUNC) of an ELF file's .dynsym (readelf), names without versions,
// sorted, unique; with their st_value.
std::map<std::string, uint64_t> dynsym_functions(const std::string& path);
// Offsets from the function's start of every instruction boundary (`xprobe decode FILE SYM`).
std::vector<uint64_t> instruction_offsets(const std::string& path, const std::string& symbol, uint64_t symbol_value);

// The byte at `address` of `pid` (read through /proc/PID/mem); -1 when unreadable.
int process_byte(pid_t pid, uint64_t address);
// The byte at `symbol` of the mapped object whose path ends in `object_suffix` in `pid`
// (read through /proc/PID/mem); -1 when unreadable.
int code_byte(pid_t pid, const std::string& object_path, const std::string& symbol);
// The trap engine's breakpoint on x86: hlt, which faults (SIGSEGV, rip on it), unlike int3.
inline constexpr int kTrapBreakpointByte = 0xf4;
// Waits until that byte is a breakpoint or a jump: the probe is planted. False on timeout or exit.
bool wait_until_planted(pid_t pid, const std::string& object_path, const std::string& symbol, int timeout_ms);

// Processes whose parent is `parent` that are stopped (T, t) or zombies (Z); "pid state comm".
std::vector<std::string> stopped_or_zombie_children(pid_t parent);
// Every live process (zombies included) whose parent is `parent`, found by scanning /proc.
std::vector<pid_t> children_by_ppid(pid_t parent);
// Waits (up to `timeout_ms`) until `pid` runs `path` (its exec after our fork is done).
bool wait_for_exec(pid_t pid, const std::string& path, int timeout_ms);
// The state letter of /proc/PID/stat, or 0 when the process is gone.
char process_state(pid_t pid);
// TracerPid of /proc/PID/status, -1 when gone.
pid_t tracer_of(pid_t pid);

// Writes `contents` to a fresh temporary file and returns its path.
std::string temp_file(const std::string& name, const std::string& contents);
std::string read_file(const std::string& path);
uint64_t count_lines_with(const std::string& text, const std::string& needle);

}  // namespace xprobe::torture
