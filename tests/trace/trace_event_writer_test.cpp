// The Trace Event Format writer, its text checked by Python's JSON parser against the
// format's rules (trace_event_rules.py) and its slices against the calls that were made.
#include "trace/perfetto/trace_event_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

namespace xprobe::trace {
namespace {

constexpr uint64_t kFunction = 0x401000;
constexpr uint64_t kOther = 0x402000;

EventDescription event(std::string name, std::string point, bool is_return, std::string argument) {
  EventDescription description;
  description.group = "demo";
  description.event = std::move(name);
  description.binary = "/bin/demo";
  description.probe_point = std::move(point);
  description.is_return = is_return;
  description.argument_names = {std::move(argument)};
  description.argument_types = {probe::FetchType{probe::TypeKind::Signed, 4}};
  return description;
}

// 0: entry of f, 1: return of f, 2: entry of g (no return probe), 3: return of h (no entry probe),
// 4: entry of k, 5: return of k.
EventCatalog catalog() {
  return {event("f", "/bin/demo:f", false, "n"), event("f_ret", "/bin/demo:f", true, "rv"),
          event("g", "/bin/demo:g", false, "x"), event("h_ret", "/bin/demo:h", true, "rv"),
          event("k", "/bin/demo:k", false, "n"), event("k_ret", "/bin/demo:k", true, "rv")};
}

EventRecord record(uint32_t probe, int32_t tid, uint64_t ns, int64_t value, uint64_t function = kFunction) {
  EventRecord r;
  r.probe_id = probe;
  r.tid = tid;
  r.comm = "demo";
  r.timestamp_ns = ns;
  r.address = function;
  if (probe % 2 == 1) {
    r.function_address = function;
    r.address = 0x401234;
  }
  probe::FetchedValue v;
  v.type = probe::FetchType{probe::TypeKind::Signed, 4};
  v.numbers = {static_cast<uint64_t>(value) & 0xffffffffu};
  r.values = {v};
  return r;
}

struct Written {
  std::string text;
  std::string rules_verdict;  // the checker's JSON summary
  int rules_status = -1;
};

Written run(const EventCatalog& events, const std::vector<EventRecord>& records, ProcessOfThread process_of = {}) {
  FormatContext context{events, {}, true, 2, std::move(process_of), {}};
  auto writer = make_trace_event_writer(context);
  Written written;
  written.text = writer->begin();
  for (const EventRecord& r : records) writer->write(r, written.text);
  written.text += writer->end();
  const std::string path = ::testing::TempDir() + "/trace_events_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << written.text;
  const std::string command = std::string(PYTHON_PATH) + " " + TRACE_EVENT_RULES + " " + path;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get())) written.rules_verdict += buffer;
  const int status = pipe ? pclose(pipe.release()) : -1;
  written.rules_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  unlink(path.c_str());
  return written;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TraceEventWriter, RecursionNestsSlicesAndTheReturnsCloseThemInnermostFirst) {
  const EventCatalog events = catalog();
  const Written out = run(events, {record(0, 7, 1000, 3), record(0, 7, 2000, 2), record(0, 7, 3000, 1),
                                   record(1, 7, 4000, 1), record(1, 7, 5000, 2), record(1, 7, 6000, 3)});
  EXPECT_EQ(out.rules_status, 0) << out.text;
  EXPECT_NE(out.rules_verdict.find("\"B\": {\"f\": 3}"), std::string::npos) << out.rules_verdict;
  EXPECT_NE(out.rules_verdict.find("\"E\": {\"f\": 3}"), std::string::npos) << out.rules_verdict;
  EXPECT_NE(out.rules_verdict.find("\"depth\": {\"f\": 3}"), std::string::npos) << out.rules_verdict;
  // The innermost call (n=1) returns first: its E carries the return's value.
  EXPECT_NE(out.text.find("{\"name\":\"f\",\"cat\":\"demo\",\"ph\":\"B\",\"ts\":3.000,\"pid\":7,\"tid\":7,\"args\":{\"n\":1}},\n"
                          "{\"name\":\"f\",\"cat\":\"demo\",\"ph\":\"E\",\"ts\":4.000,\"pid\":7,\"tid\":7,\"args\":{\"rv\":1}}"),
            std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.front(), '[');
  EXPECT_EQ(out.text.substr(out.text.size() - 3), "\n]\n");
}

TEST(TraceEventWriter, AReturnClosesTheSlicesUnwoundPastWithoutAReturn) {
  const EventCatalog events = catalog();
  // f calls k, k longjmps (or throws) out to f, then f returns: k's slice ends there too.
  const Written out = run(events, {record(0, 7, 1000, 1), record(4, 7, 2000, 2, kOther), record(4, 7, 2500, 3, kOther),
                                   record(1, 7, 3000, 9)});
  EXPECT_EQ(out.rules_status, 0) << out.text;
  EXPECT_NE(out.rules_verdict.find("\"E\": {\"f\": 1, \"k\": 2}"), std::string::npos) << out.rules_verdict;
  EXPECT_NE(out.text.find("{\"name\":\"k\",\"cat\":\"demo\",\"ph\":\"E\",\"ts\":3.000,\"pid\":7,\"tid\":7,\"args\":{}},\n"
                          "{\"name\":\"k\",\"cat\":\"demo\",\"ph\":\"E\",\"ts\":3.000,\"pid\":7,\"tid\":7,\"args\":{}},\n"
                          "{\"name\":\"f\",\"cat\":\"demo\",\"ph\":\"E\",\"ts\":3.000,\"pid\":7,\"tid\":7,\"args\":{\"rv\":9}}"),
            std::string::npos)
      << out.text;
}

TEST(TraceEventWriter, EntriesWithoutAReturnProbeAndUnmatchedReturnsAreInstantEvents) {
  const EventCatalog events = catalog();
  const Written out = run(events, {record(2, 7, 1000, -4, kOther), record(3, 7, 2000, 5, kOther), record(1, 7, 3000, 6)});
  EXPECT_EQ(out.rules_status, 0) << out.text;
  EXPECT_NE(out.rules_verdict.find("\"i\": {\"f_ret\": 1, \"g\": 1, \"h_ret\": 1}"), std::string::npos) << out.rules_verdict;
  EXPECT_NE(out.text.find("{\"name\":\"g\",\"cat\":\"demo\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1.000,\"pid\":7,\"tid\":7,"
                          "\"args\":{\"x\":-4}}"),
            std::string::npos)
      << out.text;
  EXPECT_EQ(occurrences(out.text, "\"ph\":\"B\""), 0u);
}

TEST(TraceEventWriter, ThreadsAreNamedOnceAndAgainWhenTheirCommChanges) {
  const EventCatalog events = catalog();
  std::vector<EventRecord> records{record(2, 7, 1000, 1, kOther), record(2, 8, 1100, 1, kOther), record(2, 7, 1200, 1, kOther)};
  records[2].comm = "worker";
  const Written out = run(events, records, [](int32_t) { return std::optional<ThreadProcess>({7, "demo-main"}); });
  EXPECT_EQ(out.rules_status, 0) << out.text;
  EXPECT_EQ(occurrences(out.text, "\"process_name\""), 1u) << out.text;
  EXPECT_EQ(occurrences(out.text, "\"thread_name\""), 3u) << out.text;
  EXPECT_NE(out.text.find("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":7,\"args\":{\"name\":\"demo-main\"}}"),
            std::string::npos);
  EXPECT_NE(out.text.find("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":8,\"args\":{\"name\":\"demo\"}}"),
            std::string::npos);
  EXPECT_NE(out.text.find("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":7,\"args\":{\"name\":\"worker\"}}"),
            std::string::npos);
}

TEST(TraceEventWriter, TimestampsNeverGoBackOnAThreadAndEndClosesWhatIsOpen) {
  const EventCatalog events = catalog();
  // Records of two engines may come a little out of order; the later one keeps the thread's time.
  const Written out = run(events, {record(0, 7, 5000, 1), record(0, 7, 4000, 2), record(2, 9, 1000, 1, kOther)});
  EXPECT_EQ(out.rules_status, 0) << out.text;
  EXPECT_EQ(occurrences(out.text, "\"ts\":5.000"), 4u) << out.text;  // two B, two E at the end
  EXPECT_NE(out.rules_verdict.find("\"E\": {\"f\": 2}"), std::string::npos) << out.rules_verdict;
}

TEST(TraceEventWriter, AThreadDeeperThanTheBoundGetsInstantEventsAndStaysBalanced) {
  const EventCatalog events = catalog();
  std::vector<EventRecord> records;
  for (size_t i = 0; i <= kMaxOpenSlicesPerThread; ++i) records.push_back(record(0, 7, 1000 + i, 1));
  const Written out = run(events, records);
  EXPECT_EQ(out.rules_status, 0) << out.rules_verdict;
  EXPECT_EQ(occurrences(out.text, "\"ph\":\"B\""), kMaxOpenSlicesPerThread);
  EXPECT_EQ(occurrences(out.text, "\"ph\":\"i\""), 1u);
}

TEST(TraceEventWriter, TheRulesCheckerRefusesUnbalancedAndUnnamedTraces) {
  // The checker itself must be able to fail: an E that names another slice, a thread unnamed.
  const std::string path = ::testing::TempDir() + "/trace_events_bad_" + std::to_string(getpid()) + ".json";
  for (const char* text :
       {"[{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"a\"}},"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"a\"}},"
        "{\"name\":\"f\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1},{\"name\":\"g\",\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":1}]",
        "[{\"name\":\"f\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1,\"pid\":1,\"tid\":1}]",
        "[{\"name\":\"f\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1,\"pid\":1,\"tid\":1}"}) {
    std::ofstream(path) << text;
    const std::string command = std::string(PYTHON_PATH) + " " + TRACE_EVENT_RULES + " " + path + " >/dev/null 2>&1";
    const int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  }
  unlink(path.c_str());
}

}  // namespace
}  // namespace xprobe::trace
