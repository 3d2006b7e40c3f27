// `xprobe list`: the probe-able lines it numbers are exactly the lines gdb can break on, and
// the variable, function and marker listings say what readelf and the source say.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "source_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::string orders(int level) { return fmt::format("{}/orders_O{}", ORDERS_DIR, level); }

std::string xprobe_list(const std::string& arguments) { return shell_output(fmt::format("{} list {}", XPROBE_PATH, arguments)); }

class Listings : public ::testing::TestWithParam<int> {};

// perf probe -L's numbering: a line is numbered iff `break FILE:LINE` breaks on that very
// line (gdb moves a breakpoint on a line without code to the next one).
TEST_P(Listings, NumberedLinesAreTheLinesGdbBreaksOn) {
  const std::string binary = orders(GetParam());
  const std::string listing = xprobe_list(binary + " --lines handle_order");
  std::smatch header;
  ASSERT_TRUE(std::regex_search(listing, header, std::regex(R"(<handle_order@(\S+):0>)"))) << listing;
  // Absolute line numbers from the listing: the header's line is the function's name line.
  std::istringstream lines(listing);
  std::string line;
  std::getline(lines, line);
  std::map<unsigned, bool> numbered;  // relative line -> has a number
  unsigned relative = 0;
  for (; std::getline(lines, line); ++relative) numbered[relative] = std::regex_search(line, std::regex(R"(^\s+\d+  )"));
  ASSERT_GT(numbered.size(), 3u) << listing;
  const std::string source = read_text_file(ORDERS_SOURCE);
  unsigned name_line = 1;
  for (size_t at = 0, end = source.find("int handle_order("); at < end; ++at) name_line += source[at] == '\n' ? 1 : 0;
  std::string commands;
  for (const auto& [rel, has] : numbered) commands += fmt::format(" -ex 'break orders.c:{}'", name_line + rel);
  const std::string gdb = shell_output("gdb -batch -nx" + commands + " " + binary);
  std::map<unsigned, unsigned> broke;  // requested line (in order) -> the line gdb chose
  static const std::regex chosen(R"(Breakpoint (\d+) at 0x[0-9a-f]+: (?:file \S+, line (\d+)\.|\S+:(\d+)\.))");
  for (auto it = std::sregex_iterator(gdb.begin(), gdb.end(), chosen); it != std::sregex_iterator(); ++it) {
    const unsigned number = static_cast<unsigned>(std::stoul((*it)[1].str()));
    const std::string where = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
    broke[name_line + number - 1] = static_cast<unsigned>(std::stoul(where));
  }
  for (const auto& [rel, has] : numbered) {
    const unsigned absolute = name_line + rel;
    const bool gdb_breaks_here = broke.count(absolute) != 0 && broke[absolute] == absolute;
    EXPECT_EQ(has, gdb_breaks_here) << "line " << absolute << " (handle_order:" << rel << ")\n" << listing << gdb;
  }
}

TEST_P(Listings, VariablesAtAPlaceWithTheirTypes) {
  const std::string listing = xprobe_list(orders(GetParam()) + " --vars handle_order");
  EXPECT_NE(listing.find("Available variables at handle_order (@<handle_order+"), std::string::npos) << listing;
  EXPECT_NE(listing.find("struct order *\torder\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("int\tround\n"), std::string::npos) << listing;
}

INSTANTIATE_TEST_SUITE_P(OptimisationLevels, Listings, ::testing::Values(0, 2),
                         [](const auto& level) { return fmt::format("O{}", level.param); });

TEST(ListingsOfFunctions, InlinedOnlyFunctionsAreMarked) {
  const std::string listing = xprobe_list(orders(2) + " --functions 'w*'");
  EXPECT_EQ(listing, "weight  [inlined 1, no out-of-line copy]\n");
  EXPECT_EQ(xprobe_list(orders(0) + " --functions 'w*'"), "weight\n");
}

// The markers as readelf -n shows them (pc, semaphore, arguments), on the real python3.11.
TEST(ListingsOfMarkers, AsReadelfShowsThem) {
  for (const std::string& binary : {orders(2), std::string("/usr/bin/python3.11")}) {
    const std::string notes = shell_output("readelf -n " + binary);
    const std::string listing = xprobe_list(binary + " --sdt");
    static const std::regex note(
        R"(Provider: (\S+)\s+Name: (\S+)\s+Location: 0x0*([0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: 0x0*([0-9a-f]+)\s+Arguments: ([^\n]*))");
    size_t markers = 0;
    for (auto it = std::sregex_iterator(notes.begin(), notes.end(), note); it != std::sregex_iterator(); ++it, ++markers) {
      const std::string semaphore = (*it)[4].str();
      const std::string expected = fmt::format("%sdt_{}:{}  pc 0x{}{}  args: {}\n", (*it)[1].str(), (*it)[2].str(), (*it)[3].str(),
                                               semaphore.empty() ? "" : "  semaphore 0x" + semaphore, (*it)[5].str());
      EXPECT_NE(listing.find(expected), std::string::npos) << expected << listing;
    }
    EXPECT_GT(markers, 0u) << binary;
    EXPECT_EQ(static_cast<size_t>(std::count(listing.begin(), listing.end(), '\n')), markers) << listing;
  }
}

}  // namespace
}  // namespace xprobe::testing
