// `xprobe trace` end to end on arm64, inside the AArch64 VM: the cross-built xprobe on
// cross-built programs, with AArch64's register names and AAPCS64. Expected values come from
// what the programs pass (written by hand from their sources) or from the VM kernel's own
// uprobes given the same definitions (never from xprobe's output). The kernel's uprobes and
// xprobe's breakpoints never share an address at the same time: the kernel's run comes first
// and its events are deleted before xprobe's.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

// The file offset of `symbol` (what uprobe_events wants), from the ELF program headers read
// with libelf (the VM has no readelf; independent of xprobe's ELF code).
uint64_t file_offset(const std::string& path, const std::string& symbol) {
  const uint64_t value = symbol_value(path, symbol);
  if (value == 0) return 0;
  elf_version(EV_CURRENT);
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  uint64_t offset = 0;
  size_t count = 0;
  if (elf != nullptr && elf_getphdrnum(elf, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr header;
      if (gelf_getphdr(elf, static_cast<int>(i), &header) == nullptr || header.p_type != PT_LOAD) continue;
      if (value >= header.p_vaddr && value < header.p_vaddr + header.p_filesz) {
        offset = value - header.p_vaddr + header.p_offset;
        break;
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return offset;
}

std::vector<std::string> with_e(const std::vector<std::string>& definitions) {
  std::vector<std::string> args;
  for (const auto& d : definitions) args.insert(args.end(), {"-e", d});
  return args;
}

// Runs the definitions under the kernel's uprobes first, then under xprobe, on the same
// command; both must run it as untraced, and give the same events with the same values
// (but for the fields of `kernel_only`, EVENT/FIELD, which the kernel's own probing changes).
// Returns xprobe's run.
TracedRun expect_same_as_the_kernel(const std::vector<std::string>& definitions, const std::vector<std::string>& command,
                                    size_t expected_events, const std::set<std::string>& kernel_only = {},
                                    const std::vector<std::string>& xprobe_options = {}) {
  TracedRun xprobe;
  for (const auto& d : definitions) EXPECT_EQ(d.find(":0x0 "), std::string::npos) << "symbol not found: " << d;
  const RunResult untraced = run_untraced(command);
  KernelRun kernel = run_under_kernel_uprobes(definitions, command);
  // The VM's kernel has UPROBE_EVENTS: a refusal is a failure here, not a reason to skip.
  EXPECT_TRUE(kernel.skip_reason.empty()) << kernel.skip_reason;
  EXPECT_EQ(kernel.program_output, untraced.output);
  EXPECT_EQ(kernel.events.size(), expected_events) << "kernel events";
  if (kernel.events.size() != expected_events) return xprobe;

  std::vector<std::string> args = xprobe_options;
  for (const auto& d : with_e(definitions)) args.push_back(d);
  xprobe = run_xprobe(args, command);
  EXPECT_EQ(xprobe.program_output, untraced.output);
  EXPECT_EQ(xprobe.xprobe_status, untraced.exit_status) << xprobe.diagnostics;
  EXPECT_EQ(xprobe.events.size(), kernel.events.size()) << xprobe.trace_text << xprobe.diagnostics;
  if (xprobe.events.size() != kernel.events.size()) return xprobe;
  for (size_t i = 0; i < kernel.events.size(); ++i) {
    const TraceEvent& k = kernel.events[i];
    const TraceEvent& x = xprobe.events[i];
    EXPECT_EQ(x.event, k.event) << "event " << i;
    EXPECT_EQ(x.args.size(), k.args.size()) << "event " << i << " (" << k.event << ")";
    for (size_t a = 0; a < std::min(k.args.size(), x.args.size()); ++a)
      if (!kernel_only.count(k.event + "/" + k.args[a].first)) {
        EXPECT_EQ(x.args[a], k.args[a]) << "event " << i << " (" << k.event << ") field " << k.args[a].first;
      }
    EXPECT_EQ(x.comm, k.comm) << "event " << i;
    EXPECT_EQ(x.location.find(" <- ") != std::string::npos, k.location.find(" <- ") != std::string::npos);
  }
  return xprobe;
}

// Address-space randomisation off while a test compares register values of two runs (the
// kernel's and xprobe's): pointers in registers are then the same in both. Restored after.
class NoRandomization {
 public:
  NoRandomization() {
    std::ifstream in(kPath);
    std::getline(in, saved_);
    std::ofstream(kPath) << "0\n";
  }
  ~NoRandomization() {
    if (!saved_.empty()) std::ofstream(kPath) << saved_ << "\n";
  }

 private:
  static constexpr const char* kPath = "/proc/sys/kernel/randomize_va_space";
  std::string saved_;
};

std::string at(const std::string& binary, const std::string& symbol, uint64_t plus = 0) {
  return fmt::format("{}:{:#x}", binary, file_offset(binary, symbol) + plus);
}

// Every general register, sp and pc at an entry, in the middle of a function and at a return,
// under the kernel's uprobes and under xprobe: the same values, event by event.
std::string every_register() {
  std::string registers;
  for (int r = 0; r <= 30; ++r) registers += fmt::format(" x{0}=%x{0}:x64", r);
  return registers + " sp=%sp:x64 pc=%pc:x64";
}

// With breakpoints (--engine trap); Arm64Jump.* below has the jump engine's.
TEST(Arm64Trace, EveryRegisterAsTheKernelSeesIt) {
  const std::string bin = STACK_ARGS_PATH;
  const std::string registers = every_register();
  NoRandomization fixed_layout;
  // The kernel's return probe hijacks x30 at the entry (its uretprobe trampoline, in the
  // [uprobes] page, is where the function returns); xprobe never writes x30: after the entry
  // it still holds the caller's return address.
  const TracedRun xprobe =
      expect_same_as_the_kernel({fmt::format("p:xpt_oracle/entry {}{}", at(bin, "ten_args"), registers),
                                 fmt::format("p:xpt_oracle/mid {}{}", at(bin, "ten_args", 8), registers),
                                 fmt::format("r:xpt_oracle/exit {}{}", at(bin, "ten_args"), registers)},
                                {bin, "3"}, 9, {"mid/x30", "exit/x30"}, {"--engine", "trap"});
  ASSERT_EQ(xprobe.events.size(), 9u);
  for (size_t call = 0; call < 3; ++call) {
    EXPECT_EQ(xprobe.events[call * 3 + 1].arg("x30"), xprobe.events[call * 3].arg("x30"));
    EXPECT_EQ(xprobe.events[call * 3 + 2].arg("x30"), xprobe.events[call * 3].arg("x30"));
  }
}

// Memory, strings, bitfields, arrays, stack slots, faults and return values: the kernel's
// fetch arguments on arm64 (no $argN there: the kernel has it for kprobes only; no :char,
// which the VM's 6.1 kernel predates).
void expect_fetch_arguments_as_the_kernel(const std::vector<std::string>& engine) {
  const std::string fetchargs = FETCHARGS_PATH;
  expect_same_as_the_kernel(
      {fmt::format("p:xpt_oracle/many {} a=%x0:s64 b=%x1:x32 c=%x2:u16 h=%x7:x64 who=$comm", at(fetchargs, "many_args")),
       fmt::format("p:xpt_oracle/rec {} id=+0(%x0):s32 flags=+4(%x0):b3@0/32 mode=+4(%x0):b5@3/32 name=+8(%x0):string "
                   "label=+0(+24(%x0)):string values=+32(%x0):s64[4]",
                   at(fetchargs, "take_record")),
       fmt::format("p:xpt_oracle/str {} s=+0(%x0):string small=%x1:s8 medium=%x2:s16 us=+0(%x0):ustring first=+0(%x0):u8",
                   at(fetchargs, "take_string")),
       fmt::format("p:xpt_oracle/bad {} s=+0(%x0):string n=+0(%x0):u64", at(fetchargs, "keep_pointer")),
       fmt::format("r:xpt_oracle/ret {} ret=$retval:s64 x0=%x0:s64", at(fetchargs, "recurse"))},
      {fetchargs, "4"}, 4u * (1 + 1 + 1 + 1 + 5), {}, engine);
  const std::string stack_args = STACK_ARGS_PATH;
  expect_same_as_the_kernel({fmt::format("p:xpt_oracle/ten {} i=$stack0:s64 j=$stack1:s64 i8=+0(%sp):s64 "
                                         "j8=+8(%sp):s64 x8=%x8:s64",
                                         at(stack_args, "ten_args"))},
                            {stack_args, "3"}, 3, {}, engine);
}

TEST(Arm64Trace, FetchArgumentsAsTheKernelFetchesThem) { expect_fetch_arguments_as_the_kernel({"--engine", "trap"}); }

// AAPCS64 by hand: $arg1..$arg8 in x0..x7, $arg9 and $arg10 on the stack at sp ($stack0,
// $stack1), the return address in x30 at entry, pc the probed address.
TEST(Arm64Trace, ArgumentsStackAndLinkRegisterByHand) {
  auto run = run_xprobe({"-e", "p:t/ten ten_args a=$arg1:s64 h=$arg8:s64 i=$arg9:s64 j=$arg10:s64 s0=$stack0:s64 "
                               "s1=$stack1:s64 sp8=+8(%sp):s64 x7=%x7:s64 lr=%x30:symbol pc=%pc:x64 k=\\42:u32"},
                        {STACK_ARGS_PATH, "3"});
  const RunResult untraced = run_untraced({STACK_ARGS_PATH, "3"});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  auto ten = events_named(run.events, "ten");
  ASSERT_EQ(ten.size(), 3u) << run.trace_text << run.diagnostics;
  for (int k = 0; k < 3; ++k) {
    const TraceEvent& e = ten[static_cast<size_t>(k)];
    EXPECT_EQ(e.arg("a"), std::to_string(k));
    EXPECT_EQ(e.arg("h"), "7");
    EXPECT_EQ(e.arg("x7"), "7");
    EXPECT_EQ(e.arg("i"), std::to_string(900 + k));
    EXPECT_EQ(e.arg("s0"), std::to_string(900 + k));
    EXPECT_EQ(e.arg("j"), std::to_string(-1000 - k));
    EXPECT_EQ(e.arg("s1"), std::to_string(-1000 - k));
    EXPECT_EQ(e.arg("sp8"), std::to_string(-1000 - k));
    EXPECT_EQ(e.arg("lr").rfind("main+0x", 0), 0u) << e.arg("lr");  // x30: the call's return address in main
    EXPECT_EQ(e.arg("pc"), e.location);                               // the probed instruction
    EXPECT_EQ(e.arg("k"), "42");
  }
}

TEST(Arm64Trace, StructsStringsGlobalsAndSymbolsByHand) {
  auto run = run_xprobe({"-e", "p:t/rec take_record id=+0(%x0):s32 flags=+4(%x0):b3@0/32 mode=+4(%x0):b5@3/32 "
                               "name=+8(%x0):string label=+0(+24(%x0)):string values=+32(%x0):s64[4]",
                         "-e", "p:t/str take_string s=+0(%x0):ustring small=%x1:s8 medium=$arg3:s16",
                         "-e", "p:t/glob keep_pointer counter=@counter_global:s64 greeting=+0(@greeting_global):string "
                               "who=$comm ret=%x30:symbol bad=+0(%x0):string"},
                        {FETCHARGS_PATH, "3"});
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  auto rec = events_named(run.events, "rec");
  auto str = events_named(run.events, "str");
  auto glob = events_named(run.events, "glob");
  ASSERT_EQ(rec.size(), 3u) << run.trace_text << run.diagnostics;
  ASSERT_EQ(str.size(), 3u);
  ASSERT_EQ(glob.size(), 3u);
  const long expected_counter[] = {7, 7, 8};  // counter_global += i after each round
  for (int i = 0; i < 3; ++i) {
    const auto k = static_cast<size_t>(i);
    EXPECT_EQ(rec[k].arg("id"), std::to_string(100 + i));
    EXPECT_EQ(rec[k].arg("flags"), std::to_string(i & 7));
    EXPECT_EQ(rec[k].arg("mode"), "17");
    EXPECT_EQ(rec[k].arg("name"), fmt::format("\"rec-{}\"", i));
    EXPECT_EQ(rec[k].arg("label"), "\"label\"");
    EXPECT_EQ(rec[k].arg("values"), fmt::format("{{{},{},{},{}}}", i * 10, i * 10 + 1, i * 10 + 2, i * 10 + 3));
    EXPECT_EQ(str[k].arg("s"), i % 2 ? "\"odd string\"" : "\"even\"");
    EXPECT_EQ(str[k].arg("small"), std::to_string(-5 - i));
    EXPECT_EQ(str[k].arg("medium"), std::to_string(-300 * (i + 1)));
    EXPECT_EQ(glob[k].arg("counter"), std::to_string(expected_counter[k]));
    EXPECT_EQ(glob[k].arg("greeting"), "\"hello-global\"");
    EXPECT_EQ(glob[k].arg("who"), "\"fetchargs\"");
    EXPECT_EQ(glob[k].arg("ret").rfind("main+0x", 0), 0u) << glob[k].arg("ret");
    EXPECT_EQ(glob[k].arg("bad"), "(fault)");
  }
}

void expect_return_probes_under_recursion(const std::string& engine) {
  auto run = run_xprobe({"--engine", engine, "-e", "p:t/in recurse depth=$arg1:s64", "-e", "r:t/out recurse ret=$retval:s64 depth=$arg1:s64"},
                        {FETCHARGS_PATH, "3"});
  EXPECT_EQ(run.xprobe_status, run_untraced({FETCHARGS_PATH, "3"}).exit_status) << run.diagnostics;
  auto in = events_named(run.events, "in");
  auto out = events_named(run.events, "out");
  ASSERT_EQ(in.size(), 15u) << run.trace_text << run.diagnostics;
  ASSERT_EQ(out.size(), 15u);
  const long entry_depths[] = {4, 3, 2, 1, 0};
  const long return_depths[] = {0, 1, 2, 3, 4};
  const long return_values[] = {0, 1, 3, 6, 10};
  for (size_t k = 0; k < 15; ++k) {
    EXPECT_EQ(in[k].arg("depth"), std::to_string(entry_depths[k % 5]));
    EXPECT_EQ(out[k].arg("depth"), std::to_string(return_depths[k % 5]));
    EXPECT_EQ(out[k].arg("ret"), std::to_string(return_values[k % 5]));
    EXPECT_NE(out[k].location.find(" <- "), std::string::npos) << out[k].location;
  }
  for (size_t round = 0; round < 3; ++round)
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(run.events[round * 10 + k].event, "in");
      EXPECT_EQ(run.events[round * 10 + 5 + k].event, "out");
    }
}

TEST(Arm64Trace, ReturnProbesUnderRecursion) { expect_return_probes_under_recursion("trap"); }

TEST(Arm64Trace, MisalignedAndJumpOnlyProbesAreRefusedClearly) {
  auto misaligned = run_xprobe({"-e", "p:t/odd many_args+2"}, {FETCHARGS_PATH, "1"});
  EXPECT_EQ(misaligned.xprobe_status, 1);
  EXPECT_NE(misaligned.diagnostics.find("not a multiple of 4"), std::string::npos) << misaligned.diagnostics;
  EXPECT_TRUE(misaligned.program_output.empty());  // the program never ran
  // The jump engine takes entries and return sites; a mid-function probe stays a breakpoint
  // (--engine auto) or is refused with the reason (--engine jump).
  auto jump = run_xprobe({"--engine", "jump", "-e", "p:t/mid many_args+8 a=%x0:s64"}, {FETCHARGS_PATH, "1"});
  EXPECT_NE(jump.xprobe_status, 0);
  EXPECT_NE(jump.diagnostics.find("cannot be jump-optimized"), std::string::npos) << jump.diagnostics;
  EXPECT_NE(jump.diagnostics.find("first instruction"), std::string::npos) << jump.diagnostics;
  auto automatic = run_xprobe({"--engine", "auto", "-e", "p:t/mid many_args+8 a=%x0:s64"}, {FETCHARGS_PATH, "2"});
  EXPECT_EQ(automatic.xprobe_status, run_untraced({FETCHARGS_PATH, "2"}).exit_status) << automatic.diagnostics;
  EXPECT_EQ(count(automatic.events, "mid"), 2u) << automatic.diagnostics;
}

// The jump engine (--engine jump: every probe a B to a trampoline, or xprobe refuses to
// start): the registers at an entry and a return, and every fetch-argument kind, as the
// kernel's uprobes see them.
TEST(Arm64Jump, EntryAndReturnRegistersAsTheKernelSeesThem) {
  const std::string bin = STACK_ARGS_PATH;
  const std::string registers = every_register();
  NoRandomization fixed_layout;
  const TracedRun xprobe =
      expect_same_as_the_kernel({fmt::format("p:xpt_oracle/entry {}{}", at(bin, "ten_args"), registers),
                                 fmt::format("r:xpt_oracle/exit {}{}", at(bin, "ten_args"), registers)},
                                {bin, "3"}, 6, {"exit/x30"}, {"--engine", "jump"});
  ASSERT_EQ(xprobe.events.size(), 6u);
  for (size_t call = 0; call < 3; ++call)
    EXPECT_EQ(xprobe.events[call * 2 + 1].arg("x30"), xprobe.events[call * 2].arg("x30"));
}

TEST(Arm64Jump, FetchArgumentsAsTheKernelFetchesThem) { expect_fetch_arguments_as_the_kernel({"--engine", "jump"}); }

TEST(Arm64Jump, ReturnProbesUnderRecursion) { expect_return_probes_under_recursion("jump"); }

class Arm64ControlFlow : public ::testing::TestWithParam<std::string> {
 protected:
  TracedRun trace(std::vector<std::string> args, const std::vector<std::string>& command) {
    args.insert(args.begin(), {"--engine", GetParam()});
    return run_xprobe(args, command);
  }
};

TEST_P(Arm64ControlFlow, EightThreadsHitTheSameProbes) {
  const std::vector<std::string> command{e2e_program("threads"), "25"};
  auto run = trace({"-e", "p:t/work work x=%x0:s64", "-e", "r:t/step_ret step ret=$retval:s64"}, command);
  const RunResult untraced = run_untraced(command);
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_EQ(count(run.events, "work"), 8u * 25) << run.diagnostics;
  EXPECT_EQ(count(run.events, "step_ret"), 8u * 25) << run.diagnostics;
  std::set<pid_t> tids;
  for (const auto& e : run.events) tids.insert(e.tid);
  EXPECT_EQ(tids.size(), 8u);
}

TEST_P(Arm64ControlFlow, LongjmpOutOfProbedFunctions) {
  const std::string program = e2e_program("jumper");
  auto run = trace({"-e", "p:t/dive dive depth=%x0:s32", "-e", "r:t/dive_ret dive ret=$retval:s32", "-e",
                    "r:t/leaf_ret leaf ret=$retval:s32"},
                   {program});
  const RunResult untraced = run_untraced({program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // jumper.c: 13 rounds recurse to depth 0 (9 calls and returns), 7 longjmp out of depth 2.
  EXPECT_EQ(count(run.events, "dive"), 7u * 7 + 13u * 9) << run.diagnostics;
  EXPECT_EQ(count(run.events, "dive_ret"), 13u * 9) << run.diagnostics;
  EXPECT_EQ(count(run.events, "leaf_ret"), 20u);
}

TEST_P(Arm64ControlFlow, CxxExceptionThroughProbedFunctions) {
  const std::string program = e2e_program("thrower");
  const RunResult untraced = run_untraced({program});
  std::vector<std::string> args;
  for (const char* f : {"outer", "middle", "inner"}) {
    args.insert(args.end(), {"-e", fmt::format("p:t/{0} {0} n=%x0:s32", f)});
    args.insert(args.end(), {"-e", fmt::format("r:t/{0}_ret {0} ret=$retval:s32", f)});
  }
  auto run = trace(args, {program});
  EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // thrower.cpp: outer(i) for i < 40; inner throws when i % 4 == 3, caught in outer (-100).
  EXPECT_EQ(count(run.events, "outer"), 40u);
  EXPECT_EQ(count(run.events, "inner"), 40u);
  EXPECT_EQ(count(run.events, "inner_ret"), 30u);
  EXPECT_EQ(count(run.events, "middle_ret"), 30u);
  EXPECT_EQ(count(run.events, "outer_ret"), 40u);
  int caught = 0;
  for (const auto& e : run.events) caught += e.event == "outer_ret" && e.arg("ret") == "-100";
  EXPECT_EQ(caught, 10);
}

INSTANTIATE_TEST_SUITE_P(Engines, Arm64ControlFlow, ::testing::Values("trap", "auto", "jump"));

// Both engines: --engine auto takes jumps on arm64, so the breakpoint engine's lifecycle is
// asked for by name.
class Arm64Lifecycle : public ::testing::TestWithParam<const char*> {};

TEST_P(Arm64Lifecycle, ForkExecAndFollowFork) {
  const std::string forker = e2e_program("forker");
  const RunResult untraced = run_untraced({forker});
  auto run = run_xprobe({"--engine", GetParam(), "-e", "p:t/work work x=%x0:s32"}, {forker});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_EQ(count(run.events, "work"), 10u) << run.trace_text;  // the child runs without breakpoints
  auto followed = run_xprobe({"--follow-fork", "-e", "p:t/work work x=%x0:s32"}, {forker});
  EXPECT_EQ(followed.program_output, untraced.output);
  EXPECT_EQ(followed.xprobe_status, untraced.exit_status) << followed.diagnostics;
  std::map<pid_t, size_t> by_tid;
  for (const auto& e : followed.events) ++by_tid[e.tid];
  EXPECT_EQ(followed.events.size(), 15u) << followed.trace_text;
  EXPECT_EQ(by_tid.size(), 2u);

  const std::string execer = e2e_program("execer");
  auto exec = run_xprobe({"--engine", GetParam(), "-e", "p:t/work work x=%x0:s32"}, {execer});
  EXPECT_EQ(exec.program_output, run_untraced({execer}).output);
  EXPECT_EQ(exec.xprobe_status, 4) << exec.diagnostics;
  ASSERT_EQ(count(exec.events, "work"), 3u) << exec.trace_text << exec.diagnostics;
  EXPECT_EQ(exec.events[0].arg("x"), "1");  // before the exec, then twice in the new image
  EXPECT_EQ(exec.events[1].arg("x"), "2");
  EXPECT_EQ(exec.events[2].arg("x"), "3");
}

TEST_P(Arm64Lifecycle, LibraryLoadedByDlopenWhileAThreadIsBusy) {
  const std::vector<std::string> command{LOADER_PATH, PLUGIN_PATH, "busy"};
  const RunResult untraced = run_untraced(command);
  auto run = run_xprobe({"--engine", GetParam(), "-e", "p:t/plugin libplugin.so:plugin_compute x=%x0:s32", "-e",
                         "r:t/plugin_ret libplugin.so:plugin_compute ret=$retval:s32"},
                        command);
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  ASSERT_EQ(count(run.events, "plugin"), 4u) << run.trace_text << run.diagnostics;
  int k = 0;
  for (const auto& e : events_named(run.events, "plugin_ret")) {
    EXPECT_EQ(e.arg("ret"), std::to_string(k * k + 1)) << k;  // loader.c: plugin_compute(0..3) = x*x+1
    ++k;
  }
  EXPECT_EQ(k, 4);
}

TEST_P(Arm64Lifecycle, AttachToABusyProcessAndDetach) {
  const std::string program = e2e_program("ticker");
  // 5000 ticks: at least 10 s, longer than xprobe takes to start under TCG (about 8 s).
  const RunResult untraced = run_untraced({program, "5000"});
  const std::string out = fmt::format("{}/ticker-attach-{}.out", ::testing::TempDir(), getpid());
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    execl(program.c_str(), program.c_str(), "5000", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string events = fmt::format("{}/ticker-attach-{}.events", ::testing::TempDir(), getpid());
  unlink(events.c_str());
  const pid_t tracer = fork();
  if (tracer == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(XPROBE_PATH, XPROBE_PATH, "trace", "--engine", GetParam(), "-p", std::to_string(child).c_str(), "-o", events.c_str(), "-e",
          "p:t/tick tick x=%x0:s64", "-e", "r:t/tick_ret tick ret=$retval:s64", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int waited = 0; waited < 3000 && count(parse_trace(read_text_file(events)), "tick") < 5; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(tracer, SIGINT);
  int tracer_status = 0;
  waitpid(tracer, &tracer_status, 0);
  EXPECT_TRUE(WIFEXITED(tracer_status) && WEXITSTATUS(tracer_status) == 0) << tracer_status;
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the program did not survive the detach: " << status;
  EXPECT_EQ(WEXITSTATUS(status), untraced.exit_status);
  EXPECT_EQ(read_text_file(out), untraced.output);
  const auto traced = parse_trace(read_text_file(events));
  EXPECT_GE(count(traced, "tick"), 5u);
  for (const auto& e : traced)
    if (e.event == "tick_ret") {
      EXPECT_GT(std::stol(e.arg("ret")), 0);  // tick(x) returns x + 1, x >= 0
    }
  unlink(out.c_str());
  unlink(events.c_str());
}

INSTANTIATE_TEST_SUITE_P(Engines, Arm64Lifecycle, ::testing::Values("trap", "jump"));

// Every 4-byte boundary of hot arm64 libc functions probed with `xprobe trace` (one
// definition each, through -f): the program's output and exit status as untraced.
TEST(Arm64Trace, EveryInstructionOfHotLibcFunctions) {
  const std::vector<std::string> command{e2e_program("counter"), "5"};
  const std::string libc = "/usr/lib/aarch64-linux-gnu/libc.so.6";
  const std::string definitions = fmt::format("{}/hot-libc-{}.defs", ::testing::TempDir(), getpid());
  size_t planted = 0;
  {
    std::ofstream file(definitions);
    for (const char* function : {"puts", "printf", "malloc", "free", "atoi"}) {
      const uint64_t size = symbol_size(libc, function);
      ASSERT_GT(size, 0u) << function;
      for (uint64_t offset = 0; offset < size; offset += 4, ++planted)
        file << fmt::format("p:hot/{0}_{1:x} libc.so.6:{0}+{1:#x}\n", function, offset);
    }
  }
  const RunResult untraced = run_untraced(command);
  auto run = run_xprobe({"-f", definitions}, command);
  unlink(definitions.c_str());
  EXPECT_GT(planted, 200u);
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_GT(run.events.size(), 100u) << run.diagnostics;
  std::set<std::string> functions_hit;
  for (const auto& e : run.events) functions_hit.insert(e.event.substr(0, e.event.find('_')));
  // counter.c calls printf (twice), atoi and malloc (stdout's buffer); puts and free are probed, not run.
  EXPECT_TRUE(functions_hit.count("printf") && functions_hit.count("atoi") && functions_hit.count("malloc"))
      << run.diagnostics;
}

}  // namespace
}  // namespace xprobe::testing
