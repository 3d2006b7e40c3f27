// Filters against the kernel: the same filter text written to the kernel's filter file of a
// uprobe event and given to xprobe with --filter (or as a definition's `if`), on the same
// program and inputs: the same events pass, with the same values, on both engines.
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "filter_calls.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

const std::vector<std::string> kFilters = {
    "n < 0 && u & 1",
    "name ~ \"alpha*\" || s < -1000",
    "!(name == \"beta\" || name ~ \"*ta\") && n >= -50",
    "u > 3000000000 || name ~ \"?e[l-t]*\"",
    "n == -100 || n == 5 || (s & 0x100 && !(u < 100000))",
    "comm ~ \"filter*\" && name != \"zeta\" && common_pid > 0",
    "n < -50 || name == \"gamma\" && s > 0",
    "name ~ \"*ph*\" && cpu >= 0",
};

void expect_same_events(const std::vector<TraceEvent>& kernel, const std::vector<TraceEvent>& xprobe,
                        const std::string& context) {
  ASSERT_EQ(xprobe.size(), kernel.size()) << context;
  for (size_t i = 0; i < kernel.size(); ++i) EXPECT_EQ(xprobe[i].args, kernel[i].args) << context << ", event " << i;
}

TEST(FilterOracle, SameEventsPassAsThroughTheKernelsFilter) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "200"};
  const std::string definition = visit_definition();
  ASSERT_EQ(definition.find(":0x0 "), std::string::npos);
  for (const std::string& filter : kFilters) {
    KernelRun kernel = run_under_kernel_uprobes({definition}, command, {{"xpt_oracle/visit", filter}});
    if (!kernel.skip_reason.empty()) GTEST_SKIP() << kernel.skip_reason;
    // Every filter lets some through and holds some back, so none is trivially right.
    ASSERT_GT(kernel.events.size(), 0u) << filter;
    ASSERT_LT(kernel.events.size(), 200u) << filter;
    for (const char* engine : {"trap", "jump"}) {
      TracedRun xprobe = run_xprobe({"--engine", engine, "-e", definition, "--filter", "xpt_oracle/visit:" + filter}, command);
      ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
      expect_same_events(kernel.events, xprobe.events, fmt::format("{} (--engine {})", filter, engine));
    }
  }
}

TEST(FilterOracle, TrailingIfIsTheEventsFilter) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "100"};
  const std::string filter = kFilters[1];
  KernelRun kernel = run_under_kernel_uprobes({visit_definition()}, command, {{"xpt_oracle/visit", filter}});
  if (!kernel.skip_reason.empty()) GTEST_SKIP() << kernel.skip_reason;
  TracedRun xprobe = run_xprobe({"-e", visit_definition() + " if " + filter}, command);
  ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
  expect_same_events(kernel.events, xprobe.events, filter);
}

TEST(FilterOracle, RefusedFilterShowsTheKernelsMessageAndCaretAndStartsNothing) {
  TracedRun xprobe = run_xprobe({"-e", visit_definition(), "--filter", "xpt_oracle/visit:u == -1"},
                                {FILTER_CALLS_PATH, "visits", "3"});
  EXPECT_NE(xprobe.xprobe_status, 0);
  EXPECT_EQ(xprobe.program_output, "");
  EXPECT_NE(xprobe.diagnostics.find("u == -1\n      ^\nparse_error: Illegal integer value"), std::string::npos)
      << xprobe.diagnostics;
  xprobe = run_xprobe({"-e", visit_definition(), "--filter", "xpt_oracle/nosuch:u == 1"}, {FILTER_CALLS_PATH, "visits", "3"});
  EXPECT_NE(xprobe.xprobe_status, 0);
  EXPECT_NE(xprobe.diagnostics.find("no event xpt_oracle/nosuch"), std::string::npos) << xprobe.diagnostics;
}

// In the jump engine the agent evaluates the filter: a hit it turns away writes no ring
// record (counted from the ring by the tracer), and the hits are still all counted.
TEST(FilterInTheAgent, HitsTheFilterTurnsAwayWriteNoRingRecord) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "200"};
  struct Case {
    std::string filter;
    bool decidable_in_agent;
  };
  for (const Case& c : {Case{"n > 100000", true}, Case{kFilters[1], true}, Case{kFilters[2], true},
                        Case{"comm == \"nobody\" || n < 0", false}}) {
    TracedRun xprobe = run_xprobe({"--engine", "jump", "--summary", "-e", visit_definition(), "--filter",
                                   "xpt_oracle/visit:" + c.filter},
                                  command);
    ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
    const SummaryCounts counts = summary_counts(xprobe.diagnostics, "xpt_oracle/visit");
    const long events = static_cast<long>(xprobe.events.size());
    EXPECT_EQ(counts.recorded, events) << c.filter << "\n" << xprobe.diagnostics;
    EXPECT_EQ(counts.missed, 0) << c.filter;
    EXPECT_EQ(counts.recorded + counts.filtered, 200) << c.filter << "\n" << xprobe.diagnostics;
    // Decided in the agent: one record per event; else (comm is the tracer's to tell, and
    // n < 0 alone cannot rule a hit out) every hit crosses the ring.
    EXPECT_EQ(counts.ring_records, c.decidable_in_agent ? events : 200) << c.filter << "\n" << xprobe.diagnostics;
  }
}

}  // namespace
}  // namespace xprobe::testing
