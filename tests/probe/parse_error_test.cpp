#include "probe/parse_error.h"

#include <gtest/gtest.h>

namespace xprobe::probe {
namespace {

TEST(ParseError, RendersTheKernelErrorLogShape) {
  // Copied from this machine's tracefs error_log after writing the same command.
  ParseError error{"Invalid register name", "p /bin/true:0x10 %foo", 17, std::nullopt, {}};
  EXPECT_EQ(error.render_kernel_style(371.779625),
            "[  371.779625] trace_uprobe: error: Invalid register name\n"
            "  Command: p /bin/true:0x10 %foo\n"
            "                            ^\n");
}

TEST(ParseError, RendersOriginAndFileLine) {
  ParseError error{"Invalid fetch argument", "p foo x", 6, std::nullopt, {}};
  EXPECT_EQ(error.render(),
            "xprobe: error: Invalid fetch argument\n"
            "  Command: p foo x\n"
            "                 ^\n");
  error.line = 3;
  error.file = "probes.txt";
  EXPECT_EQ(error.render(),
            "probes.txt:3: xprobe: error: Invalid fetch argument\n"
            "  Command: p foo x\n"
            "                 ^\n");
}

TEST(ParseError, CaretAtColumnZero) {
  ParseError error{"m", "x", 0, std::nullopt, {}};
  EXPECT_EQ(error.render("t"), "t: error: m\n  Command: x\n           ^\n");
}

}  // namespace
}  // namespace xprobe::probe
