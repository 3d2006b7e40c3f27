// Split debug information: a stripped binary (no .symtab, no DWARF) finds its debug file by
// .gnu_debuglink and by build-id, and its source-level probes read the same values; a missing
// debug file is one error naming every path tried.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <string>

#include "source_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

class SplitDebug : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/xprobe-split-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    binary_ = directory_ + "/orders";
    debug_ = directory_ + "/orders.debug";
    const std::string source = fmt::format("{}/orders_O0", ORDERS_DIR);
    ASSERT_EQ(system(fmt::format("cp {} {} && objcopy --only-keep-debug {} {} && strip --strip-all {} && "
                                 "objcopy --add-gnu-debuglink={} {}",
                                 source, binary_, binary_, debug_, binary_, debug_, binary_)
                         .c_str()),
              0);
    ASSERT_EQ(shell_output("readelf -S " + binary_).find(".debug_info"), std::string::npos);
    ASSERT_EQ(shell_output("readelf -S " + binary_).find(".symtab"), std::string::npos);
  }
  void TearDown() override {
    unsetenv("XPROBE_DEBUG_FILE_DIRECTORY");
    std::filesystem::remove_all(directory_);
  }

  // handle_order's parameters through members and the round, as the program printed them.
  void expect_values() {
    const TracedRun run = run_xprobe({"-e", "p:src/h handle_order len=order->hdr.len kind=order->hdr.kind round"}, {binary_, "3"});
    ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
    const auto events = events_named(run.events, "h");
    ASSERT_EQ(events.size(), 3u) << run.trace_text;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].arg("round"), std::to_string(i));
      EXPECT_NE(run.program_output.find(fmt::format("handled {} len={} kind={}", i, events[i].arg("len"), events[i].arg("kind"))),
                std::string::npos);
    }
  }

  std::string build_id() {
    const std::string notes = shell_output("readelf -n " + binary_);
    const size_t at = notes.find("Build ID: ");
    if (at == std::string::npos) return {};
    return notes.substr(at + 10, notes.find('\n', at) - at - 10);
  }

  std::string directory_, binary_, debug_;
};

TEST_F(SplitDebug, FoundByDebuglinkNextToTheBinary) { expect_values(); }

TEST_F(SplitDebug, FoundByBuildIdInTheDebugDirectory) {
  const std::string id = build_id();
  ASSERT_GT(id.size(), 2u);
  const std::string root = directory_ + "/debug";
  const std::string by_id = fmt::format("{}/.build-id/{}/{}.debug", root, id.substr(0, 2), id.substr(2));
  std::filesystem::create_directories(std::filesystem::path(by_id).parent_path());
  std::filesystem::rename(debug_, by_id);
  setenv("XPROBE_DEBUG_FILE_DIRECTORY", root.c_str(), 1);
  expect_values();
}

TEST_F(SplitDebug, MissingDebugFileNamesThePathsTried) {
  std::filesystem::remove(debug_);
  setenv("XPROBE_DEBUG_FILE_DIRECTORY", (directory_ + "/nodebug").c_str(), 1);
  const TracedRun run = run_xprobe({"-e", "p handle_order order->hdr.len"}, {binary_, "1"});
  EXPECT_NE(run.xprobe_status, 0);
  const std::string id = build_id();
  EXPECT_NE(run.diagnostics.find(binary_ + ": no debug information (no .debug_info; tried "), std::string::npos) << run.diagnostics;
  EXPECT_NE(run.diagnostics.find(fmt::format("{}/nodebug/.build-id/{}/{}.debug", directory_, id.substr(0, 2), id.substr(2))),
            std::string::npos)
      << run.diagnostics;
  EXPECT_NE(run.diagnostics.find(debug_), std::string::npos) << run.diagnostics;
  EXPECT_NE(run.diagnostics.find(directory_ + "/.debug/orders.debug"), std::string::npos) << run.diagnostics;
  EXPECT_EQ(run.program_output, "");
}

}  // namespace
}  // namespace xprobe::testing
