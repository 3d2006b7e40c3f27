// The registry of output formats and the writers the session drives.
#include "trace/output_format.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace xprobe::trace {
namespace {

EventCatalog one_event_catalog() {
  EventDescription description;
  description.group = "demo";
  description.event = "open";
  description.argument_names = {"fd"};
  description.argument_types = {probe::FetchType{probe::TypeKind::Signed, 4}};
  return {description};
}

EventRecord one_record() {
  EventRecord record;
  record.probe_id = 0;
  record.tid = 42;
  record.comm = "cat";
  record.cpu = 1;
  record.timestamp_ns = 441094151000ull;
  record.address = 0x401000;
  probe::FetchedValue value;
  value.type = probe::FetchType{probe::TypeKind::Signed, 4};
  value.numbers = {static_cast<uint64_t>(-2)};
  record.values = {value};
  return record;
}

TEST(OutputFormats, FtraceIsTheDefaultAndEveryNameIsFoundOnce) {
  EXPECT_EQ(default_output_format().name, "ftrace");
  std::set<std::string_view> names;
  for (const OutputFormat& format : output_formats()) {
    EXPECT_TRUE(names.insert(format.name).second) << format.name;
    EXPECT_EQ(find_output_format(format.name), &format);
    EXPECT_FALSE(format.description.empty()) << format.name;
  }
  EXPECT_TRUE(names.count("json"));
  EXPECT_EQ(find_output_format("xml"), nullptr);
}

TEST(OutputFormats, TheFtraceWriterStartsWithTheStreamHeaderAndWritesOneLinePerEvent) {
  const EventCatalog catalog = one_event_catalog();
  auto writer = find_output_format("ftrace")->make(FormatContext{catalog, {}, false, 2});
  // The kernel's header without the entries-in-buffer line: a stream has no buffer to describe.
  EXPECT_EQ(writer->begin(),
            "# tracer: nop\n"
            "#\n"
            "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
            "#              | |         |         |         |\n");
  std::string out;
  writer->write(one_record(), out);
  EXPECT_EQ(out, "             cat-42      [001]    441.094151: open: (0x401000) fd=-2\n");
  EXPECT_EQ(writer->end(), "");
}

TEST(OutputFormats, TheJsonWriterHasNoHeaderAndWritesOneObjectPerLine) {
  const EventCatalog catalog = one_event_catalog();
  auto writer = find_output_format("json")->make(FormatContext{catalog, {}, true, 2});
  EXPECT_EQ(writer->begin(), "");
  std::string out;
  writer->write(one_record(), out);
  writer->write(one_record(), out);
  const std::string line =
      "{\"event\":\"demo/open\",\"tid\":42,\"comm\":\"cat\",\"cpu\":1,\"timestamp_ns\":441094151000,"
      "\"address\":\"0x401000\",\"args\":{\"fd\":-2}}\n";
  EXPECT_EQ(out, line + line);
}

}  // namespace
}  // namespace xprobe::trace
