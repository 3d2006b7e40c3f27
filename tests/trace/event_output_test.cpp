// Where formatted events go: every byte of a regular file is a whole event or text.
#include "trace/event_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace xprobe::trace {
namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(EventOutput, TextAfterBufferedEventsIsKept) {
  // A trailer written while events are still buffered (the Trace Event Format's closing
  // bracket after its last events) must reach the file after them.
  const std::string path = ::testing::TempDir() + "/event_output_" + std::to_string(getpid());
  ProbeStatistics statistics;
  {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    EventOutput output(fd, true, false, statistics);
    output.write_text("[");
    output.write_event(0, "\n{\"a\":1}", 1);
    output.write_event(0, ",\n{\"a\":2}", 2);
    output.write_text("\n]\n");
    EXPECT_EQ(output.events_written(), 2u);
  }
  EXPECT_EQ(contents(path), "[\n{\"a\":1},\n{\"a\":2}\n]\n");
  unlink(path.c_str());
}

TEST(EventOutput, WithoutAStreamEveryEventCountsAsWritten) {
  ProbeStatistics statistics;
  EventOutput output(-1, false, false, statistics);  // a directory format's writer keeps its files
  output.write_event(0, "", 1);
  output.write_event(0, "", 2);
  output.flush();
  EXPECT_EQ(output.events_written(), 2u);
  EXPECT_EQ(statistics.dropped(), 0u);
}

}  // namespace
}  // namespace xprobe::trace
