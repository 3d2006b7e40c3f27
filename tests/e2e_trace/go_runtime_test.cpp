// A Go program under both engines (programs/goroutines: goroutines that move between threads,
// stacks the runtime copies while a probed call is active, probed calls nested by
// recursion). The program counts its calls and the sums of their arguments and results; the
// events must add up to exactly that, every return must carry the result its own call
// computed (a return matched to another goroutine's frame would not), and the program's
// output must equal an untraced run's.
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

// What work(0, 0, 0, x) returns (programs/goroutines/main.go), computed independently here.
int64_t expected_result(int64_t x) {
  if (x % 7 == 0) {
    int64_t sum = 0;
    for (int64_t i = 0; i <= 48; ++i) sum += (x + i) & 255;
    return sum;
  }
  if (x % 11 == 0 && x > 0) return expected_result(x - 1) + 1;
  return x * 3 + 1;
}

struct ProgramAccount {
  int64_t calls = -1, argument_sum = -1, result_sum = -1;
};

ProgramAccount parse_account(const std::string& output) {
  ProgramAccount account;
  long long calls = 0, arguments = 0, results = 0;
  if (std::sscanf(output.c_str(), "calls=%lld argument_sum=%lld result_sum=%lld", &calls, &arguments, &results) == 3)
    account = {calls, arguments, results};
  return account;
}

void expect_events_match_the_program(const std::string& engine, const std::string& goroutines, const std::string& calls) {
  const std::vector<std::string> command{GOROUTINES_PATH, goroutines, calls};
  const RunResult untraced = run_untraced(command);
  ASSERT_EQ(untraced.exit_status, 0);
  const ProgramAccount account = parse_account(untraced.output);
  ASSERT_GT(account.calls, 0) << untraced.output;

  const std::string place = fmt::format("{}:main.work", GOROUTINES_PATH);
  TracedRun traced = run_xprobe({"--engine", engine, "-e", fmt::format("p:go/work {} x=%di:s64", place), "-e",
                                 fmt::format("r:go/work_ret {}%return x=$arg1:s64 result=$retval:s64", place)},
                                command);
  ASSERT_EQ(traced.xprobe_status, 0) << traced.diagnostics;
  EXPECT_EQ(traced.program_output, untraced.output);
  EXPECT_EQ(traced.diagnostics.find("missed"), std::string::npos) << traced.diagnostics;

  // Returns: one per call, each with the result of its own call's argument.
  const std::vector<TraceEvent> returns = events_named(traced.events, "work_ret");
  int64_t argument_sum = 0, result_sum = 0, wrong = 0;
  for (const TraceEvent& event : returns) {
    const int64_t x = std::stoll(event.arg("x")), result = std::stoll(event.arg("result"));
    argument_sum += x;
    result_sum += result;
    if (result != expected_result(x)) ++wrong;
  }
  EXPECT_EQ(static_cast<int64_t>(returns.size()), account.calls);
  EXPECT_EQ(wrong, 0) << "returns matched to the wrong frame";
  EXPECT_EQ(argument_sum, account.argument_sum);
  EXPECT_EQ(result_sum, account.result_sum);

  // Entries: every call's argument. A function whose stack must grow at its entry runs its
  // first instruction again after the runtime has grown it (the kernel's uprobes see that
  // twice too), so an argument may appear more often than it was called with.
  std::map<int64_t, int64_t> entered, returned;
  for (const TraceEvent& event : events_named(traced.events, "work")) ++entered[std::stoll(event.arg("x"))];
  for (const TraceEvent& event : returns) ++returned[std::stoll(event.arg("x"))];
  int64_t short_entries = 0;
  for (const auto& [x, times] : returned)
    if (entered[x] < times) ++short_entries;
  EXPECT_EQ(short_entries, 0);
}

TEST(GoRuntime, ReturnProbesFollowGoroutinesWithBreakpoints) { expect_events_match_the_program("trap", "16", "60"); }

TEST(GoRuntime, ReturnProbesFollowGoroutinesJumpOptimized) { expect_events_match_the_program("jump", "40", "300"); }

}  // namespace
}  // namespace xprobe::testing
