// Values the optimiser splits into pieces (DW_OP_piece) or only knows from the function's
// entry (DW_OP_entry_value), in split_values.c at -O2: a part in one piece is read and equals
// gdb's value hit for hit; what fetch arguments cannot read is refused with why. Each test first
// checks the DWARF really uses the operation, so it cannot pass on an easier location.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <regex>
#include <string>
#include <vector>

#include "source_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::string split_values() { return fmt::format("{}/split_values_O2", ORDERS_DIR); }

std::string dwarf_locations(const std::string& binary) {
  return shell_output(fmt::format("readelf --debug-dump=info,loc {}", binary));
}

std::vector<std::string> event_lines(const TracedRun& run, const std::string& name) {
  std::vector<std::string> lines;
  for (const TraceEvent& event : events_named(run.events, name)) {
    std::string line;
    for (const auto& [argument, value] : event.args) line += (line.empty() ? "" : " ") + value;
    lines.push_back(line);
  }
  return lines;
}

TEST(SplitValues, MembersInOnePieceEqualGdbHitForHit) {
  const std::string binary = split_values();
  static const std::regex two_register_pieces(
      R"(DW_OP_reg[0-9]+ \([a-z0-9]+\); DW_OP_piece: 8; DW_OP_reg[0-9]+ \([a-z0-9]+\); DW_OP_piece: 8)");
  ASSERT_TRUE(std::regex_search(dwarf_locations(binary), two_register_pieces)) << "GCC did not split the structs";

  const std::vector<std::string> gdb_pick =
      gdb_values_per_hit(binary, "4", "pick", {{"entry.key", "%ld"}, {"entry.value", "%ld"}, {"which", "%d"}});
  const std::vector<std::string> gdb_unpack =
      gdb_values_per_hit(binary, "4", "unpack", {{"packed.low", "%d"}, {"packed.rest", "%ld"}});
  ASSERT_EQ(gdb_pick.size(), 4u);
  ASSERT_EQ(gdb_unpack.size(), 4u);

  const TracedRun run = run_xprobe(
      {"-e", "p:split/pick pick entry.key entry.value which", "-e", "p:split/unpack unpack packed.low packed.rest"},
      {binary, "4"});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  EXPECT_EQ(event_lines(run, "pick"), gdb_pick) << run.trace_text;
  EXPECT_EQ(event_lines(run, "unpack"), gdb_unpack) << run.trace_text;
}

TEST(SplitValues, PartsNoFetchArgumentReachesAreRefusedWithWhy) {
  struct Case {
    std::string definition;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"p unpack packed.high", "'packed.high' is byte 4 onwards of the register piece"},
      {"p pick entry", "is a struct pair: name one of its members (key, value)"},
  };
  for (const Case& c : cases) {
    const TracedRun run = run_xprobe({"-e", c.definition}, {split_values(), "1"});
    EXPECT_NE(run.xprobe_status, 0) << c.definition;
    EXPECT_NE(run.diagnostics.find(c.message), std::string::npos) << c.definition << ": " << run.diagnostics;
    EXPECT_EQ(run.program_output, "") << c.definition;
  }
}

#if defined(__x86_64__)
// outer+22 is its last instruction (x86-64 code of GCC 12), after the second inlined scale()
// overwrote the first argument register: outer's `x` is only DW_OP_entry_value(%di) there.
TEST(SplitValues, EntryValueAwayFromTheEntryIsRefusedWithWhereItLives) {
  static const std::regex entry_value(R"(DW_OP_(GNU_)?entry_value: \(DW_OP_reg5 \(rdi\)\))");
  ASSERT_TRUE(std::regex_search(dwarf_locations(split_values()), entry_value)) << "GCC gave no entry value";
  const TracedRun run = run_xprobe({"-e", "p outer+22 x"}, {split_values(), "1"});
  EXPECT_NE(run.xprobe_status, 0);
  EXPECT_NE(run.diagnostics.find("its value is only known as what %di held at its function's entry (0x"), std::string::npos)
      << run.diagnostics;
  EXPECT_NE(run.diagnostics.find("(DW_OP_entry_value), which the process no longer has here: probe that entry to read it; "
                                 "it has a location at 0x"),
            std::string::npos)
      << run.diagnostics;
  EXPECT_EQ(run.program_output, "");
}
#endif

}  // namespace
}  // namespace xprobe::testing
