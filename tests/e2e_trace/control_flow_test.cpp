// Threads, longjmp and C++ exceptions through probed functions: the program must behave as
// untraced, and the events must be complete. Each runs with breakpoints only and with the
// default engine (jump-optimized entries and return sites where they can be).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

class ControlFlow : public ::testing::TestWithParam<std::string> {
 protected:
  TracedRun trace(std::vector<std::string> args, const std::vector<std::string>& command) {
    args.insert(args.begin(), {"--engine", GetParam()});
    return run_xprobe(args, command);
  }
};

TEST_P(ControlFlow, EightThreadsHitTheSameProbes) {
  const std::string program = e2e_program("threads");
  auto run = trace({"-e", "p:t/work work x=%di:s64", "-e", "r:t/step_ret step ret=$retval:s64"}, {program});
  const RunResult untraced = run_untraced({program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // threads.c: 8 threads x 2000 calls of step(), each calling work() once.
  EXPECT_EQ(count(run.events, "work"), 16000u) << run.diagnostics;
  EXPECT_EQ(count(run.events, "step_ret"), 16000u) << run.diagnostics;
  std::set<pid_t> tids;
  for (const auto& e : run.events) tids.insert(e.tid);
  EXPECT_EQ(tids.size(), 8u);
}

TEST_P(ControlFlow, LongjmpOutOfProbedFunctions) {
  const std::string program = e2e_program("jumper");
  auto run = trace({"--summary", "-e", "p:t/dive dive depth=%di:s32", "-e", "r:t/dive_ret dive ret=$retval:s32",
                         "-e", "r:t/leaf_ret leaf ret=$retval:s32"},
                        {program});
  const RunResult untraced = run_untraced({program});
  EXPECT_EQ(run.program_output, untraced.output);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // jumper.c: 20 rounds of dive(8, ...). In the 13 rounds with round % 3 != 0 it recurses
  // down to depth 0 (9 calls, 9 returns); in the 7 others it calls depths 8..2 (7 calls) and
  // depth 2 longjmps to main: none of those 7 frames returns.
  EXPECT_EQ(count(run.events, "dive"), 7u * 7 + 13u * 9) << run.diagnostics;
  EXPECT_EQ(count(run.events, "dive_ret"), 13u * 9) << run.diagnostics;
  // Those 49 frames are counted as given up (--summary: RECORDED MISSED UNWOUND).
  unsigned long long recorded = 0, missed = 0, unwound = 0;
  const size_t row = run.diagnostics.find("\nt/dive_ret ");
  ASSERT_NE(row, std::string::npos) << run.diagnostics;
  ASSERT_EQ(std::sscanf(run.diagnostics.c_str() + row, "\nt/dive_ret %llu %llu %llu", &recorded, &missed, &unwound), 3)
      << run.diagnostics;
  EXPECT_EQ(recorded, 13u * 9);
  EXPECT_EQ(missed, 0u);
  EXPECT_EQ(unwound, 7u * 7);
  // leaf returns normally in every round, after the longjmps: shadow stacks stayed in step.
  EXPECT_EQ(count(run.events, "leaf_ret"), 20u);
  for (const auto& e : run.events)
    if (e.event == "leaf_ret") {
      EXPECT_EQ(std::stoi(e.arg("ret")) % 3, 0) << e.arg("ret");
    }
}

TEST_P(ControlFlow, CxxExceptionThroughProbedFunctions) {
  const std::string program = e2e_program("thrower");
  const RunResult untraced = run_untraced({program});
  std::vector<std::string> args;
  for (const char* f : {"outer", "middle", "inner"}) {
    args.insert(args.end(), {"-e", fmt::format("p:t/{0} {0} n=%di:s32", f)});
    args.insert(args.end(), {"-e", fmt::format("r:t/{0}_ret {0} ret=$retval:s32", f)});
  }
  auto run = trace(args, {program});
  EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  // thrower.cpp: outer(i) for i < 40; inner throws when i % 4 == 3 (10 times), the exception
  // passes through middle and is caught in outer, which returns -100.
  EXPECT_EQ(count(run.events, "outer"), 40u);
  EXPECT_EQ(count(run.events, "middle"), 40u);
  EXPECT_EQ(count(run.events, "inner"), 40u);
  EXPECT_EQ(count(run.events, "inner_ret"), 30u);
  EXPECT_EQ(count(run.events, "middle_ret"), 30u);
  EXPECT_EQ(count(run.events, "outer_ret"), 40u);
  int caught = 0;
  for (const auto& e : run.events) caught += e.event == "outer_ret" && e.arg("ret") == "-100";
  EXPECT_EQ(caught, 10);
}

// Every function of the program probed at entry and return (a glob), _start and the
// exception machinery's callers included: the program must not notice.
TEST_P(ControlFlow, EveryFunctionOfACxxProgram) {
  const std::string program = e2e_program("thrower");
  const RunResult untraced = run_untraced({program});
  auto run = trace({"-e", "p:t/any thrower:*", "-e", "r:t/any_ret thrower:*"}, {program});
  EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_GE(count(run.events, "any"), 120u);  // at least outer, middle and inner, 40 times each
}

INSTANTIATE_TEST_SUITE_P(Engines, ControlFlow, ::testing::Values("trap", "auto"));

}  // namespace
}  // namespace xprobe::testing
