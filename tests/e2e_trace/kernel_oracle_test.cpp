// The kernel's own uprobe tracer as the oracle: the same uprobe_events lines, written for the
// kernel (BINARY:0xOFFSET places, registers and memory), given unchanged to xprobe. Every
// event's arguments must be equal, event by event.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::vector<std::string> oracle_definitions() {
  const std::string bin = FETCHARGS_PATH;
  const auto at = [&](const char* symbol) { return fmt::format("{}:{:#x}", bin, file_offset_of(bin, symbol)); };
  return {
      fmt::format("p:xpt_oracle/many {} a=%di:s64 b=%si:x32 c=%dx:u16 g=+8(%sp):s64 h=+16(%sp):x64 st=$stack2:u64",
                  at("many_args")),
      fmt::format("p:xpt_oracle/rec {} id=+0(%di):s32 flags=+4(%di):b3@0/32 mode=+4(%di):b5@3/32 name=+8(%di):string "
                  "label=+0(+24(%di)):string values=+32(%di):s64[4] c=+8(%di):char who=$comm",
                  at("take_record")),
      fmt::format("p:xpt_oracle/str {} s=+0(%di):string small=%si:s8 medium=%dx:s16 us=+0(%di):ustring", at("take_string")),
      fmt::format("p:xpt_oracle/bad {} s=+0(%di):string n=+0(%di):u64", at("keep_pointer")),
      fmt::format("r:xpt_oracle/ret {} ret=$retval:s64", at("recurse")),
  };
}

TEST(KernelOracle, SameEventsAndValuesAsTheKernelsUprobes) {
  const std::vector<std::string> command{FETCHARGS_PATH, "4"};
  const auto definitions = oracle_definitions();
  for (const auto& d : definitions) ASSERT_EQ(d.find(":0x0 "), std::string::npos) << "symbol not found: " << d;
  KernelRun kernel = run_under_kernel_uprobes(definitions, command);
  if (!kernel.skip_reason.empty()) GTEST_SKIP() << kernel.skip_reason;

  std::vector<std::string> args;
  for (const auto& d : definitions) {
    args.push_back("-e");
    args.push_back(d);
  }
  TracedRun xprobe = run_xprobe(args, command);
  ASSERT_EQ(xprobe.program_output, kernel.program_output);
  ASSERT_EQ(xprobe.xprobe_status, kernel.exit_status) << xprobe.diagnostics;

  // The kernel's trace holds only this run's events (group xpt_oracle), in order.
  ASSERT_EQ(kernel.events.size(), 4u * (1 + 1 + 1 + 1 + 5)) << "kernel events";
  ASSERT_EQ(xprobe.events.size(), kernel.events.size()) << xprobe.trace_text << xprobe.diagnostics;
  for (size_t i = 0; i < kernel.events.size(); ++i) {
    const TraceEvent& k = kernel.events[i];
    const TraceEvent& x = xprobe.events[i];
    EXPECT_EQ(x.event, k.event) << "event " << i;
    EXPECT_EQ(x.args, k.args) << "event " << i << " (" << k.event << ")";
    EXPECT_EQ(x.comm, k.comm) << "event " << i;
    // Entry events print the probed address, return events "(return <- function)".
    EXPECT_EQ(x.location.find(" <- ") != std::string::npos, k.location.find(" <- ") != std::string::npos);
  }
}

}  // namespace
}  // namespace xprobe::testing
