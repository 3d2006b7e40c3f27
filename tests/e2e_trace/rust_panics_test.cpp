// A Rust program under both engines (programs/panics: panics unwinding through the probed
// function, whose frame has a destructor and so a landing pad; catch_unwind in its caller;
// four threads; a thread that panics to its top). The program counts its calls, their normal
// returns and the panics; the events must add up to that: each call entered once, each
// normal return an event carrying its own call's result, each panicked call counted as
// given up (UNWOUND) or missed, never paired with another call's return.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

struct PanicsRecord {
  long long calls = -1, argument_sum = -1, result_sum = -1, returns = -1, panicked = -1, drops = -1;
};

PanicsRecord parse_record(const std::string& output) {
  PanicsRecord r;
  const size_t at = output.find("work calls=");
  if (at == std::string::npos ||
      std::sscanf(output.c_str() + at, "work calls=%lld argument_sum=%lld result_sum=%lld returns=%lld panicked=%lld drops=%lld",
                  &r.calls, &r.argument_sum, &r.result_sum, &r.returns, &r.panicked, &r.drops) != 6)
    return {};
  return r;
}

class RustPanics : public ::testing::TestWithParam<std::string> {};

TEST_P(RustPanics, PanicsUnwindThroughAProbedFunction) {
  const RunResult untraced = run_untraced({PANICS_PATH});
  ASSERT_EQ(untraced.exit_status, 0);
  const PanicsRecord record = parse_record(untraced.output);
  ASSERT_GT(record.panicked, 0) << untraced.output;
  const TracedRun run = run_xprobe({"--engine", GetParam(), "--summary", "-e", fmt::format("p:rs/work {}:work x=%di:s64", PANICS_PATH),
                                    "-e", fmt::format("r:rs/work_ret {}:work%return x=$arg1:s64 r=$retval:s64", PANICS_PATH)},
                                   {PANICS_PATH});
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
  long long entries = 0, argument_sum = 0, returns = 0, result_sum = 0, wrong = 0;
  for (const TraceEvent& event : events_named(run.events, "work")) {
    ++entries;
    argument_sum += std::stoll(event.arg("x"));
  }
  for (const TraceEvent& event : events_named(run.events, "work_ret")) {
    ++returns;
    const long long x = std::stoll(event.arg("x")), r = std::stoll(event.arg("r"));
    result_sum += r;
    // main.rs: work(x) returns 3x+1 unless x % 5 == 3, where it panics.
    if (r != x * 3 + 1 || x % 5 == 3) ++wrong;
  }
  EXPECT_EQ(entries, record.calls);
  EXPECT_EQ(argument_sum, record.argument_sum);
  EXPECT_EQ(returns, record.returns) << run.diagnostics;
  EXPECT_EQ(result_sum, record.result_sum);
  EXPECT_EQ(wrong, 0) << "a return paired with another call";
  const SummaryCounts row = summary_counts(run.diagnostics, "rs/work_ret");
  EXPECT_EQ(row.recorded, returns);
  // Every panicked call's frame is given up; with --engine jump the uncaught thread's call
  // returns (it does not) to a site too short for a jump: counted as missed instead.
  EXPECT_EQ(row.unwound + row.missed, record.panicked) << run.diagnostics;
}

// Every function of the program's crate and the unwinder's entry points (libgcc_s's
// _Unwind_*), at entry and return: the panics unwind through probed code everywhere.
TEST_P(RustPanics, EveryFunctionOfTheCrateAndTheUnwinder) {
  const std::vector<std::string> command{PANICS_PATH, "50"};  // 50 calls per thread
  const RunResult untraced = run_untraced(command);
  const TracedRun run = run_xprobe({"--engine", GetParam() == "jump" ? "auto" : GetParam(), "--summary", "-e",
                                    fmt::format("p:rs/any {}:panics::*", PANICS_PATH), "-e",
                                    fmt::format("r:rs/any_ret {}:panics::*", PANICS_PATH), "-e", "p:rs/unwind libgcc_s.so.1:_Unwind_*",
                                    "-e", "r:rs/unwind_ret libgcc_s.so.1:_Unwind_*"},
                                   command);
  EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
  const PanicsRecord record = parse_record(untraced.output);
  // Each panic raises once (_Unwind_RaiseException) and resumes in each frame that cleans up.
  EXPECT_GE(summary_counts(run.diagnostics, "rs/unwind").recorded, record.panicked) << run.diagnostics;
  EXPECT_GE(summary_counts(run.diagnostics, "rs/any").recorded, record.calls) << run.diagnostics;
}

INSTANTIATE_TEST_SUITE_P(Engines, RustPanics, ::testing::Values("trap", "jump"));

}  // namespace
}  // namespace xprobe::testing
