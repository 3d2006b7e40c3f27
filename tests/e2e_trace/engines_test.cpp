// The two engines side by side on a real program: every entry probe of fetch_args_test.cpp's
// kinds, once with breakpoints only (--engine trap) and once jump-optimized (--engine jump).
// The events must be the same, value for value, and the program's output untouched.
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

const std::vector<std::string> kEntryProbes = {
    "-e", "p:t/many many_args a=$arg1:s64 b=$arg2:s64 f=$arg6:s64 g=$arg7:s64 h=$arg8:x64 s1=$stack1:s64 "
          "sp8=+8(%sp):s64 di=%di:s64 k=\\42:u32 ip=%ip",
    "-e", "p many_args",
    "-e", "p:t/rec take_record id=+0(%di):s32 flags=+4(%di):b3@0/32 mode=+4(%di):b5@3/32 name=+8(%di):string "
          "label=+0(+24(%di)):string values=+32(%di):s64[4] v3=+56(%di):u64 c=+8(%di):char",
    "-e", "p:t/str take_string s=+0(%di):string small=%si:s8 medium=%dx:s16 first=+0(%di):u8 xs=%si:x8 u=+0(%di):ustring",
    "-e", "p:t/bad keep_pointer s=+0(%di):string n=+0(%di):u64 deep=+0(+0(%di)):u32",
    "-e", "p:t/glob keep_pointer counter=@counter_global:s64 greeting=+0(@greeting_global):string who=$comm "
          "ret=+0(%sp):symbol imm=\\\"text\"",
    "-e", "p:t/in recurse depth=$arg1:s64 sp=%sp:x64",
};

std::vector<std::string> with_engine(const std::string& engine) {
  std::vector<std::string> args{"--engine", engine};
  args.insert(args.end(), kEntryProbes.begin(), kEntryProbes.end());
  return args;
}

// What must not depend on the engine: which events, in which order per event name, and every
// argument except the stack addresses (ASLR moves the stack between runs).
std::vector<std::string> comparable(const std::vector<TraceEvent>& events) {
  std::vector<std::string> out;
  for (const TraceEvent& e : events) {
    std::string line = e.comm + " " + e.event;
    for (const auto& [name, value] : e.args) {
      if (name == "sp" || name == "ip") continue;
      line += " " + name + "=" + value;
    }
    out.push_back(line);
  }
  std::stable_sort(out.begin(), out.end());
  return out;
}

TEST(Engines, JumpOptimizedProbesRecordWhatBreakpointsRecord) {
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  const TracedRun trap = run_xprobe(with_engine("trap"), {FETCHARGS_PATH, "3"});
  const TracedRun jump = run_xprobe(with_engine("jump"), {FETCHARGS_PATH, "3"});
  for (const TracedRun* run : {&trap, &jump}) {
    EXPECT_EQ(run->program_output, untraced.output);
    EXPECT_EQ(run->xprobe_status, untraced.exit_status) << run->diagnostics;
  }
  ASSERT_GT(trap.events.size(), 20u) << trap.trace_text << trap.diagnostics;
  EXPECT_EQ(comparable(jump.events), comparable(trap.events)) << jump.diagnostics;
  // The probed address is the same (the location column): the jump is at the function's start.
  for (const TraceEvent& e : jump.events) EXPECT_EQ(e.location.rfind("0x", 0), 0u);
  // ip is the probed address in both.
  for (const TracedRun* run : {&trap, &jump}) {
    for (const TraceEvent& e : events_named(run->events, "many")) EXPECT_EQ(e.arg("ip"), e.location);
  }
}

TEST(Engines, JumpRefusesWhatItCannotProveWithTheReason) {
  const TracedRun run = run_xprobe({"--engine", "jump", "-e", "r:t/out recurse ret=$retval:s64"}, {FETCHARGS_PATH, "3"});
  EXPECT_NE(run.xprobe_status, 0);
  EXPECT_NE(run.diagnostics.find("cannot be jump-optimized: return probes use breakpoints"), std::string::npos)
      << run.diagnostics;
  EXPECT_TRUE(run.program_output.empty()) << "refused before the program ran";
  const TracedRun middle = run_xprobe({"--engine", "jump", "-e", "p:t/mid take_string+4"}, {FETCHARGS_PATH, "3"});
  EXPECT_NE(middle.xprobe_status, 0);
  EXPECT_NE(middle.diagnostics.find("not at a function's first instruction"), std::string::npos) << middle.diagnostics;
}

TEST(Engines, AutoMixesJumpsAndBreakpointsOnOneFunction) {
  // An entry and a return probe on one function: the return probe needs a breakpoint at the
  // entry, so the entry probe shares it; another function's entry probe is a jump.
  const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
  const TracedRun run = run_xprobe({"-e", "p:t/in recurse depth=$arg1:s64", "-e", "r:t/out recurse ret=$retval:s64",
                                    "-e", "p:t/str take_string s=+0(%di):string"},
                                   {FETCHARGS_PATH, "3"});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_EQ(count(run.events, "in"), count(run.events, "out"));
  EXPECT_GT(count(run.events, "in"), 0u);
  EXPECT_EQ(count(run.events, "str"), 3u) << run.trace_text;
}

}  // namespace
}  // namespace xprobe::testing
