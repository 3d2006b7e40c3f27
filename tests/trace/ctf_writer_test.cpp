// The CTF writer: its trace directories read back by babeltrace2 (the reference reader, which
// decodes the TSDL and the packets on its own), and the directory rules of -o.
#include "trace/ctf/ctf_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "trace/ctf/tsdl_metadata.h"

namespace xprobe::trace {
namespace {

probe::FetchType type(probe::TypeKind kind, uint8_t size, uint16_t count = 0) {
  probe::FetchType t{kind, size};
  t.array_count = count;
  return t;
}

probe::FetchedValue numbers(probe::FetchType t, std::vector<uint64_t> values) {
  probe::FetchedValue v;
  v.type = t;
  v.numbers = std::move(values);
  return v;
}

probe::FetchedValue text(std::optional<std::string> value) {
  probe::FetchedValue v;
  v.type = type(probe::TypeKind::String, 8);
  v.fault = !value;
  v.strings = {std::move(value)};
  return v;
}

EventDescription open_event() {
  EventDescription e;
  e.group = "demo";
  e.event = "open";
  // "string" is a TSDL keyword and "_u" starts with the escape: both must come out as named.
  e.argument_names = {"fd", "name", "x", "arr", "c", "_u", "string", "flags", "small"};
  e.argument_types = {type(probe::TypeKind::Signed, 4),   type(probe::TypeKind::String, 8),
                      type(probe::TypeKind::Hex, 8),      type(probe::TypeKind::Unsigned, 2, 3),
                      type(probe::TypeKind::Char, 1),     type(probe::TypeKind::Unsigned, 1),
                      type(probe::TypeKind::String, 8),   type(probe::TypeKind::Bitfield, 4),
                      type(probe::TypeKind::Signed, 1)};
  return e;
}

EventDescription return_event() {
  EventDescription e;
  e.group = "demo";
  e.event = "open_ret";
  e.is_return = true;
  e.argument_names = {"rv"};
  e.argument_types = {type(probe::TypeKind::Signed, 8)};
  return e;
}

EventRecord open_record(uint32_t cpu, uint64_t ns) {
  const EventDescription e = open_event();
  EventRecord r;
  r.probe_id = 0;
  r.tid = 43;
  r.comm = "cat";
  r.cpu = cpu;
  r.timestamp_ns = ns;
  r.address = 0x401000;
  r.values = {numbers(e.argument_types[0], {0xfffffffe}), text("he said \"hi\""), numbers(e.argument_types[2], {0x7b}),
              numbers(e.argument_types[3], {1, 2, 65535}),  numbers(e.argument_types[4], {'w'}),
              numbers(e.argument_types[5], {255}),          text(std::nullopt),
              numbers(e.argument_types[7], {5}),            numbers(e.argument_types[8], {0x80})};
  return r;
}

EventRecord return_record(uint32_t cpu, uint64_t ns) {
  EventRecord r;
  r.probe_id = 1;
  r.tid = 43;
  r.comm = "cat";
  r.cpu = cpu;
  r.timestamp_ns = ns;
  r.address = 0x401234;
  r.function_address = 0x401000;
  r.values = {numbers(return_event().argument_types[0], {static_cast<uint64_t>(-5)})};
  return r;
}

// babeltrace2 prints the trace's env.hostname after the timestamp.
std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string babeltrace(const std::string& directory) {
  const std::string command = std::string(BABELTRACE2_PATH) + " --clock-seconds --no-delta " + directory + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class CtfWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = ::testing::TempDir() + "/ctf_" + std::to_string(getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name();
    (void)std::system(("rm -rf " + directory_).c_str());
  }
  void TearDown() override { (void)std::system(("rm -rf " + directory_).c_str()); }
  std::string directory_;
};

TEST_F(CtfWriter, BabeltraceReadsEveryFieldWithItsTypeAndTheCommonFields) {
  ASSERT_TRUE(prepare_ctf_directory(directory_));
  EventCatalog catalog{open_event(), return_event()};
  FormatContext context{catalog, {}, true, 2, [](int32_t) { return std::optional<ThreadProcess>({42, "cat"}); }, directory_};
  auto writer = make_ctf_writer(context);
  std::string stream;
  stream += writer->begin();
  writer->write(open_record(1, 441094151000ull), stream);
  writer->write(return_record(1, 441094151500ull), stream);
  writer->write(open_record(0, 441094152000ull), stream);
  stream += writer->end();
  EXPECT_EQ(stream, "");  // everything went to the directory
  EXPECT_EQ(writer->failure(), "");
  const std::vector<std::string> lines = lines_of(babeltrace(directory_));
  ASSERT_EQ(lines.size(), 3u) << babeltrace(directory_);
  const std::string open_fields =
      "{ __probe_ip = 0x401000, fd = -2, name = \"he said \\\"hi\\\"\", x = 0x7B, arr = [ [0] = 1, [1] = 2, [2] = 65535 ], "
      "c = 119, _u = 255, string = \"(fault)\", flags = 5, small = -128 }";
  EXPECT_EQ(lines[0], "[441.094151000] " + host() + " demo:open: { cpu_id = 1 }, { pid = 42, tid = 43, comm = \"cat\" }, " +
                          open_fields);
  EXPECT_EQ(lines[1], "[441.094151500] " + host() +
                          " demo:open_ret: { cpu_id = 1 }, { pid = 42, tid = 43, comm = \"cat\" }, "
                          "{ __probe_func = 0x401000, __probe_ret_ip = 0x401234, rv = -5 }");
  EXPECT_EQ(lines[2], "[441.094152000] " + host() + " demo:open: { cpu_id = 0 }, { pid = 42, tid = 43, comm = \"cat\" }, " +
                          open_fields);
}

TEST_F(CtfWriter, EventsOfProbesAddedLaterAreDeclaredAndFullPacketsAreWrittenAsTheyFill) {
  ASSERT_TRUE(prepare_ctf_directory(directory_));
  EventCatalog catalog{open_event()};
  FormatContext context{catalog, {}, true, 2, {}, directory_};
  auto writer = make_ctf_writer(context);
  std::string stream;
  (void)writer->begin();
  // More than one packet's worth before the probe of the return event exists.
  size_t events = 0;
  for (; events < 2 * kCtfPacketBytes / 60; ++events) writer->write(open_record(0, 1'000'000'000 + events), stream);
  struct stat st;
  ASSERT_EQ(stat((directory_ + "/stream_0").c_str(), &st), 0);
  EXPECT_GT(st.st_size, 0) << "a full packet is written before the end";
  catalog.push_back(return_event());  // a library was loaded: its probe's event comes now
  writer->write(return_record(0, 2'000'000'000), stream);
  (void)writer->end();
  EXPECT_EQ(writer->failure(), "");
  const std::vector<std::string> lines = lines_of(babeltrace(directory_));
  ASSERT_EQ(lines.size(), events + 1) << (lines.empty() ? "" : lines.front());
  EXPECT_NE(lines.back().find("demo:open_ret: { cpu_id = 0 }, { pid = 43, tid = 43, comm = \"cat\" }, "
                              "{ __probe_func = 0x401000, __probe_ret_ip = 0x401234, rv = -5 }"),
            std::string::npos)
      << lines.back();
}

TEST_F(CtfWriter, AStreamsTimestampsNeverGoBack) {
  ASSERT_TRUE(prepare_ctf_directory(directory_));
  EventCatalog catalog{open_event()};
  FormatContext context{catalog, {}, true, 2, {}, directory_};
  auto writer = make_ctf_writer(context);
  std::string stream;
  (void)writer->begin();
  writer->write(open_record(0, 5000), stream);
  writer->write(open_record(0, 4000), stream);  // the two engines' records, a little out of order
  (void)writer->end();
  const std::vector<std::string> lines = lines_of(babeltrace(directory_));
  ASSERT_EQ(lines.size(), 2u) << babeltrace(directory_);
  EXPECT_EQ(lines[1].rfind("[0.000005000]", 0), 0u) << lines[1];
}

TEST_F(CtfWriter, TheDirectoryMustBeNewEmptyOrAnEarlierTrace) {
  // A file that is not a directory.
  { std::ofstream(directory_) << "x"; }
  Status refused = prepare_ctf_directory(directory_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "-o " + directory_ + ": exists and is not a directory (a CTF trace is a directory: name a new one)");
  unlink(directory_.c_str());
  // A directory with someone else's files.
  ASSERT_EQ(mkdir(directory_.c_str(), 0755), 0);
  { std::ofstream(directory_ + "/notes.txt") << "mine"; }
  refused = prepare_ctf_directory(directory_);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("holds other files (notes.txt)"), std::string::npos) << refused.error().message;
  unlink((directory_ + "/notes.txt").c_str());
  // An earlier trace is replaced: its streams go.
  { std::ofstream(directory_ + "/metadata") << "old"; }
  { std::ofstream(directory_ + "/stream_7") << "old"; }
  EXPECT_TRUE(prepare_ctf_directory(directory_));
  struct stat st;
  EXPECT_NE(stat((directory_ + "/stream_7").c_str(), &st), 0);
  EXPECT_NE(stat((directory_ + "/metadata").c_str(), &st), 0);
}

TEST(TsdlIdentifier, KeywordsAndLeadingUnderscoresGetTheEscape) {
  EXPECT_EQ(tsdl_identifier("fd"), "fd");
  EXPECT_EQ(tsdl_identifier("string"), "_string");
  EXPECT_EQ(tsdl_identifier("__probe_ip"), "___probe_ip");
  EXPECT_EQ(uuid_text(TraceUuid{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}),
            "12345678-9abc-def0-0102-030405060708");
}

}  // namespace
}  // namespace xprobe::trace
