// Source-level places and variables against gdb: the addresses `break PLACE` chooses, and the
// values gdb prints at each hit, are what xprobe's expansion and events must give.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "source/source_definition.h"
#include "source_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::string orders(int level) { return fmt::format("{}/orders_O{}", ORDERS_DIR, level); }

// The line of orders.c holding `text` (first match), so the cases name code, not numbers.
unsigned line_of(const std::string& text) {
  std::istringstream source(read_text_file(ORDERS_SOURCE));
  unsigned number = 0;
  for (std::string line; std::getline(source, line);) {
    ++number;
    if (line.find(text) != std::string::npos) return number;
  }
  ADD_FAILURE() << "no line of orders.c holds " << text;
  return 0;
}

// The link-time addresses an expanded definition probes.
std::vector<uint64_t> expanded_addresses(const std::string& binary, const std::string& definition) {
  source::SourceObjects objects;
  auto expansion = source::expand_source_definition(definition, {binary}, objects);
  EXPECT_TRUE(expansion.ok()) << (expansion.ok() ? "" : expansion.error().message);
  std::vector<uint64_t> addresses;
  if (!expansion.ok()) return addresses;
  EXPECT_TRUE(expansion->source_level) << definition;
  static const std::regex place(R"(:(0x[0-9a-f]+)(\(|\s|$))");
  for (const std::string& text : expansion->definitions) {
    std::smatch match;
    EXPECT_TRUE(std::regex_search(text, match, place)) << text;
    if (!match.empty()) addresses.push_back(address_of_file_offset(binary, std::stoull(match[1].str(), nullptr, 16)));
  }
  std::sort(addresses.begin(), addresses.end());
  return addresses;
}

class SourcePlaces : public ::testing::TestWithParam<int> {};

// gdb skips a function's prologue; so does xprobe when it reads variables there (perf's rule
// for code whose parameters live in the frame), so each function place reads a parameter.
TEST_P(SourcePlaces, AddressesAreWhereGdbBreaks) {
  const std::string binary = orders(GetParam());
  struct Case {
    std::string gdb_place;
    std::string definition;
  };
  const unsigned loop = line_of("sum += weight(order, i)");
  const unsigned print = line_of("printf(\"handled");
  const unsigned marker = line_of("DTRACE_PROBE3");
  const unsigned name = line_of("int handle_order(");
  const std::vector<Case> cases = {
      {"handle_order", "p handle_order order"},
      {"add_all", "p add_all values"},
      {"weight", "p weight order"},  // -O2: only inlined copies
      {fmt::format("orders.c:{}", loop), fmt::format("p orders.c:{}", loop)},  // the loop calling weight
      {fmt::format("orders.c:{}", print), fmt::format("p orders.c:{}", print)},
      {fmt::format("orders.c:{}", marker), fmt::format("p handle_order:{}", marker - name)},  // relative to its name's line
      {fmt::format("orders.c:{}", line_of("total_quantity += sum")), "p handle_order@orders.c;total_quantity*"},  // a pattern
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.definition);
    const std::vector<uint64_t> gdb = gdb_breakpoint_addresses(binary, c.gdb_place);
    ASSERT_FALSE(gdb.empty()) << "gdb found no " << c.gdb_place;
    EXPECT_EQ(expanded_addresses(binary, c.definition), gdb);
  }
}

// The values of variables, members, array elements, bitfields and strings at each hit are
// the ones gdb prints at the same breakpoint, hit for hit.
TEST_P(SourcePlaces, VariablesEqualWhatGdbPrintsHitForHit) {
  const std::string binary = orders(GetParam());
  const std::vector<GdbExpression> expressions = {
      {"order->hdr.len", "%u"},     {"order->hdr.kind", "%u"},  {"order->customer", "%s"}, {"order->quantities[2]", "%d"},
      {"order->flags.priority", "%u"}, {"order->flags.urgent", "%u"}, {"order->code", "%s"},  {"round", "%d"},
      {"total_quantity", "%d"}};
  const std::vector<std::string> gdb = gdb_values_per_hit(binary, "4", "handle_order", expressions);
  ASSERT_EQ(gdb.size(), 4u);

  const TracedRun run = run_xprobe(
      {"-e", "p:src/h handle_order order->hdr.len order->hdr.kind order->customer:string order->quantities[2] "
             "order->flags.priority order->flags.urgent order->code:string round total_quantity"},
      {binary, "4"});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  std::vector<std::string> values;
  for (const TraceEvent& event : events_named(run.events, "h")) {
    std::string line;
    for (const auto& [name, value] : event.args) {
      std::string plain = value;
      if (plain.size() >= 2 && plain.front() == '"') plain = plain.substr(1, plain.size() - 2);
      line += (line.empty() ? "" : " ") + plain;
    }
    values.push_back(line);
  }
  EXPECT_EQ(values, gdb) << run.trace_text;
}

INSTANTIATE_TEST_SUITE_P(OptimisationLevels, SourcePlaces, ::testing::Values(0, 2),
                         [](const auto& level) { return fmt::format("O{}", level.param); });

// A local in the frame at a line inside the loop (-O0): gdb's values at every iteration.
TEST(SourceVariables, LocalsAtALineEqualGdbAtO0) {
  const std::string binary = orders(0);
  const std::string loop = fmt::format("orders.c:{}", line_of("sum += weight(order, i)"));
  const std::vector<std::string> gdb = gdb_values_per_hit(binary, "2", loop, {{"sum", "%d"}, {"round", "%d"}});
  ASSERT_FALSE(gdb.empty());
  const TracedRun run = run_xprobe({"-e", "p:src/l " + loop + " sum round"}, {binary, "2"});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  std::vector<std::string> values;
  for (const TraceEvent& event : events_named(run.events, "l")) values.push_back(event.arg("sum") + " " + event.arg("round"));
  EXPECT_EQ(values, gdb);
}

// A variable the optimiser keeps nowhere at the pc is refused before the program runs, with
// where it does live.
TEST(SourceVariables, OptimisedOutIsRefusedWithWhereItLives) {
  const TracedRun run = run_xprobe({"-e", "p main rounds"}, {orders(2), "1"});
  EXPECT_NE(run.xprobe_status, 0);
  EXPECT_NE(run.diagnostics.find("'rounds' is optimised out at 0x"), std::string::npos) << run.diagnostics;
  EXPECT_NE(run.diagnostics.find("it has a location at 0x"), std::string::npos) << run.diagnostics;
  EXPECT_EQ(run.program_output, "");
}

TEST(SourceVariables, UnknownNamesAndMembersAreClearErrors) {
  struct Case {
    std::string definition;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"p handle_order nosuch", "no variable 'nosuch' in scope at 0x"},
      {"p handle_order order->nosuch", "has no member 'nosuch' (its members: hdr, flags, customer, quantities, code)"},
      {"p handle_order order.hdr", "is a pointer: write '->hdr'"},
      {"p handle_order order->hdr", "is a struct header: name one of its members (kind, len)"},
      {"p handle_order order->quantities[4]", "index 4 is outside 'order->quantities' (int[4])"},
      {fmt::format("p orders.c:{}", line_of("int handle_order(") - 1),
       fmt::format("line {} of orders.c has no code (the nearest lines with code: {}, {})", line_of("int handle_order(") - 1,
                   line_of("int handle_order(") - 2, line_of("int handle_order("))},
      {"p nosuch:3", "no function 'nosuch' in the debug information of"},
  };
  for (const Case& c : cases) {
    const TracedRun run = run_xprobe({"-e", c.definition}, {orders(0), "1"});
    EXPECT_NE(run.xprobe_status, 0) << c.definition;
    EXPECT_NE(run.diagnostics.find(c.message), std::string::npos) << c.definition << ": " << run.diagnostics;
  }
}

// PyTuple_New has inlined copies and .constprop/.part clones in python3.11's debug
// information (python3.11-dbg). FUNC+OFFS in the kernel's syntax is OFFS bytes into that
// symbol, as the kernel's uprobe_events reads it; the same offset into each copy lands inside
// instructions, so the definition stays the kernel's and is not expanded over the copies.
TEST(SourcePlaces, AKernelSyntaxByteOffsetIsIntoTheSymbolOnlyNotIntoItsInlinedCopies) {
  const std::string python = "/usr/bin/python3.11";
  if (access(python.c_str(), R_OK) != 0 || access("/usr/lib/debug/.build-id", R_OK) != 0)
    GTEST_SKIP() << "no python3.11 with its debug information (python3.11-dbg)";
  source::SourceObjects objects;
  auto expansion = source::expand_source_definition("p:t/a " + python + ":PyTuple_New+6", {python}, objects);
  ASSERT_TRUE(expansion.ok()) << expansion.error().message;
  EXPECT_FALSE(expansion->source_level);
}

// At -O2 weight() exists only inlined: `weight` probes its copies, hit as often as gdb's
// breakpoint on it is.
TEST(SourcePlaces, InlinedCopiesAreHitAsOftenAsGdbsBreakpoint) {
  const std::string binary = orders(2);
  const size_t gdb_hits = gdb_values_per_hit(binary, "3", "weight", {}).size();
  ASSERT_GT(gdb_hits, 0u);
  const TracedRun run = run_xprobe({"-e", "p:src/w weight"}, {binary, "3"});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  size_t hits = 0;
  for (const TraceEvent& event : run.events) hits += event.event.rfind("w", 0) == 0 ? 1 : 0;
  EXPECT_EQ(hits, gdb_hits) << run.trace_text;
}

}  // namespace
}  // namespace xprobe::testing

namespace xprobe::testing {
namespace {

// C++: a method named with its namespace and class, a reference parameter's members, `this`.
TEST(SourceCpp, MethodArgumentsEqualGdbHitForHit) {
  for (int level : {0, 2}) {
    const std::string binary = fmt::format("{}/cart_O{}", ORDERS_DIR, level);
    SCOPED_TRACE(binary);
    const std::vector<std::string> gdb = gdb_values_per_hit(
        binary, "a b", "shop::Cart::add",
        {{"item.price", "%d"}, {"item.count", "%d"}, {"this->tax_", "%d"}, {"this->total_", "%d"}, {"times", "%d"}});
    ASSERT_EQ(gdb.size(), 4u);
    EXPECT_EQ(expanded_addresses(binary, "p shop::Cart::add times"), gdb_breakpoint_addresses(binary, "shop::Cart::add"));
    const TracedRun run = run_xprobe(
        {"-e", "p:cpp/add shop::Cart::add item.price item.count this->tax_ this->total_ times"}, {binary, "a", "b"});
    ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
    std::vector<std::string> values;
    for (const TraceEvent& event : events_named(run.events, "add")) {
      std::string line;
      for (const auto& [name, value] : event.args) line += (line.empty() ? "" : " ") + value;
      values.push_back(line);
    }
    EXPECT_EQ(values, gdb) << run.trace_text;
  }
}

}  // namespace
}  // namespace xprobe::testing
