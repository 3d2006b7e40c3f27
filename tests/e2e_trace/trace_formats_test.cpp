// --format perfetto and --format ctf on real programs under the real tracer, read by real
// readers: the Trace Event Format JSON by Python's JSON parser and a checker of the format's
// rules (tests/trace/trace_event_rules.py), the CTF directory by babeltrace2, whose values must
// be the ones xprobe's ftrace output of the same definitions has for the same program.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <cstdio>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::string command_output(const std::string& command, int* status = nullptr) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  const int raw = pipe ? pclose(pipe.release()) : -1;
  if (status) *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

std::string temp_name(const std::string& what) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : test) c = c == '/' ? '_' : c;  // a parameterized test's name: NAME/INDEX
  return fmt::format("{}/formats-{}-{}-{}", ::testing::TempDir(), what, getpid(), test);
}

// The checker's verdict on a Trace Event Format file: its summary, "" with the broken rules
// in `problems` when the file breaks one.
struct Rules {
  int status = -1;
  std::string summary;
  std::string problems;
};
Rules check_rules(const std::string& path) {
  Rules rules;
  const std::string problems = path + ".problems";
  rules.summary = command_output(fmt::format("{} {} {} 2>{}", PYTHON_PATH, TRACE_EVENT_RULES, path, problems), &rules.status);
  rules.problems = read_text_file(problems);
  unlink(problems.c_str());
  return rules;
}

// A count in the checker's summary: phase "B", name "dive" -> `"B": {... "dive": N ...}`.
long summary_count(const std::string& summary, const std::string& section, const std::string& name) {
  const size_t at = summary.find("\"" + section + "\": {");
  if (at == std::string::npos) return 0;
  const size_t end = summary.find('}', at);
  const size_t key = summary.find("\"" + name + "\": ", at);
  if (key == std::string::npos || key > end) return 0;
  return std::stol(summary.substr(key + name.size() + 4));
}

// A counter series in the checker's summary: `section` "counters" (its last value) or
// "counter_sums" (the sum of its samples); -1 when it is not there.
long counter_in(const std::string& summary, const std::string& section, const std::string& track, const std::string& series) {
  const size_t at = summary.find("\"" + section + "\": {");
  if (at == std::string::npos) return -1;
  const size_t on = summary.find("\"" + track + "\": {", at);
  if (on == std::string::npos) return -1;
  const size_t end = summary.find('}', on);
  const size_t key = summary.find("\"" + series + "\": ", on);
  if (key == std::string::npos || key > end) return -1;
  return std::stol(summary.substr(key + series.size() + 4));
}

// Every series of a counter track in the checker's summary (section as counter_in()).
std::map<std::string, long> counter_series(const std::string& summary, const std::string& section, const std::string& track) {
  std::map<std::string, long> out;
  const size_t at = summary.find("\"" + section + "\": {");
  if (at == std::string::npos) return out;
  const size_t on = summary.find("\"" + track + "\": {", at);
  if (on == std::string::npos) return out;
  const size_t end = summary.find('}', on);
  const std::regex pair("\"([^\"]*)\": (-?[0-9]+)");
  const std::string body = summary.substr(on + track.size() + 5, end - on - track.size() - 5);
  for (std::sregex_iterator it(body.begin(), body.end(), pair), last; it != last; ++it)
    out[(*it)[1].str()] = std::stol((*it)[2].str());
  return out;
}

class PerfettoFormat : public ::testing::TestWithParam<std::string> {
 protected:
  // Traces `command` with --format perfetto; the JSON file's checked summary.
  Rules trace(std::vector<std::string> args, const std::vector<std::string>& command, std::string* json = nullptr) {
    const std::string path = temp_name("perfetto") + ".json";
    args.insert(args.begin(), {"--engine", GetParam(), "--format", "perfetto"});
    const TracedRun run = run_xprobe_into(path, args, command);
    const RunResult untraced = run_untraced(command);
    EXPECT_EQ(run.program_output, untraced.output);
    EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
    Rules rules = check_rules(path);
    EXPECT_EQ(rules.status, 0) << rules.problems << rules.summary;
    if (json) *json = read_text_file(path);
    unlink(path.c_str());
    return rules;
  }
};

TEST_P(PerfettoFormat, RecursionIsNestedSlicesAndEntryOnlyProbesAreInstantsWithTheirArguments) {
  std::string json;
  const Rules rules = trace({"-e", "p:t/in recurse depth=$arg1:s64", "-e", "r:t/out recurse ret=$retval:s64",
                             "-e", "p:t/many many_args a=$arg1:s64 b=$arg2:s64"},
                            {FETCHARGS_PATH, "3"}, &json);
  // fetchargs.c: 3 rounds of recurse(4) (depths 4..0: five nested calls) and one many_args(i, -2, ...).
  EXPECT_EQ(summary_count(rules.summary, "B", "in"), 15) << rules.summary;
  EXPECT_EQ(summary_count(rules.summary, "E", "in"), 15) << rules.summary;
  EXPECT_EQ(summary_count(rules.summary, "depth", "in"), 5) << rules.summary;
  EXPECT_EQ(summary_count(rules.summary, "i", "many"), 3) << rules.summary;
  EXPECT_NE(rules.summary.find("\"threads\": 1"), std::string::npos) << rules.summary;
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(json.find(fmt::format("\"ph\":\"i\",\"s\":\"t\",\"ts\":")), std::string::npos);
  EXPECT_NE(json.find("\"args\":{\"a\":2,\"b\":-2}"), std::string::npos) << json.substr(0, 2000);
  // The innermost call returns 0, the outermost 10: the E events carry the return values.
  EXPECT_NE(json.find("\"name\":\"in\",\"cat\":\"t\",\"ph\":\"E\""), std::string::npos);
  EXPECT_NE(json.find("\"args\":{\"ret\":10}"), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"thread_name\",\"ph\":\"M\""), std::string::npos);
  EXPECT_NE(json.find("\"args\":{\"name\":\"fetchargs\"}"), std::string::npos);
}

TEST_P(PerfettoFormat, ExceptionsCloseTheSlicesTheyUnwindAtTheCatchersReturn) {
  std::vector<std::string> args;
  for (const char* f : {"outer", "middle", "inner"}) {
    args.insert(args.end(), {"-e", fmt::format("p:t/{0} {0} n=%di:s32", f)});
    args.insert(args.end(), {"-e", fmt::format("r:t/{0}_ret {0} ret=$retval:s32", f)});
  }
  const Rules rules = trace(args, {e2e_program("thrower")});
  // thrower.cpp: 40 calls of outer -> middle -> inner; 10 throw from inner to outer. Every call
  // is a slice, and the 10 unwound middle/inner slices end at outer's return, not later: the
  // slices never nest deeper than one call each.
  for (const char* f : {"outer", "middle", "inner"}) {
    EXPECT_EQ(summary_count(rules.summary, "B", f), 40) << f << rules.summary;
    EXPECT_EQ(summary_count(rules.summary, "E", f), 40) << f << rules.summary;
    EXPECT_EQ(summary_count(rules.summary, "depth", f), 1) << f << rules.summary;
  }
}

TEST_P(PerfettoFormat, LongjmpOutOfRecursionStaysBalanced) {
  const Rules rules = trace({"-e", "p:t/dive dive depth=%di:s32", "-e", "r:t/dive_ret dive ret=$retval:s32",
                             "-e", "r:t/leaf_ret leaf ret=$retval:s32"},
                            {e2e_program("jumper")});
  // jumper.c: 13 rounds of 9 calls that return, 7 rounds of 7 calls abandoned by a longjmp.
  EXPECT_EQ(summary_count(rules.summary, "B", "dive"), 7 * 7 + 13 * 9) << rules.summary;
  EXPECT_EQ(summary_count(rules.summary, "E", "dive"), 7 * 7 + 13 * 9) << rules.summary;
  EXPECT_EQ(summary_count(rules.summary, "i", "leaf_ret"), 20) << rules.summary;  // no entry probe: instants
}

TEST_P(PerfettoFormat, EveryThreadIsATrackOfItsProcess) {
  std::string json;
  const Rules rules = trace({"-e", "p:t/work work x=%di:s64"}, {e2e_program("threads")}, &json);
  EXPECT_EQ(summary_count(rules.summary, "i", "work"), 16000) << rules.summary;
  EXPECT_NE(rules.summary.find("\"threads\": 8"), std::string::npos) << rules.summary;
  size_t process_names = 0;
  for (size_t at = json.find("\"process_name\""); at != std::string::npos; at = json.find("\"process_name\"", at + 1))
    ++process_names;
  EXPECT_EQ(process_names, 1u);
}

// Aggregations are counter tracks of the traced process: filter_calls visits 300 calls visit()
// 300 times, with the eight names in turn ((i * 5) % 8: alpha, alphabet, gamma and beta-max
// once more than the others).
TEST_P(PerfettoFormat, AggregationsAreCounterTracksOfTheProcess) {
  const Rules rules = trace({"-e", "p:t/visit visit n=%di:s64 name=+0(%dx):string", "--count", "t/visit", "--hist",
                             "t/visit:hist:keys=name", "--count", "t/visit:name"},
                            {FILTER_CALLS_PATH, "visits", "300"});
  EXPECT_EQ(counter_in(rules.summary, "counters", "@visit", "value"), 300) << rules.summary;
  const std::map<std::string, long> by_name = counter_series(rules.summary, "counters", "@visit");
  const std::map<std::string, long> hist = counter_series(rules.summary, "counters", "t/visit hitcount");
  const std::map<std::string, long> expected{{"alpha", 38}, {"alphabet", 38}, {"gamma", 38}, {"beta-max", 38},
                                             {"beta", 37},  {"delta", 37},    {"epsilon", 37}, {"zeta", 37}};
  std::map<std::string, long> hist_expected;
  for (const auto& [name, count] : expected) hist_expected["name=" + name] = count;
  EXPECT_EQ(hist, hist_expected) << rules.summary;
  std::map<std::string, long> keyed = by_name;
  keyed.erase("value");
  EXPECT_EQ(keyed, expected) << rules.summary;
  EXPECT_EQ(summary_count(rules.summary, "i", "visit"), 0) << "aggregated events are not instants";
}

INSTANTIATE_TEST_SUITE_P(Engines, PerfettoFormat, ::testing::Values("trap", "auto"));

// With --interval and --clear, each sample is its interval's: the samples add up to the
// calls the program counted itself, and a key without hits in an interval reads 0 there.
TEST(PerfettoCounters, IntervalSamplesWithClearAddUpToTheProgramsOwnCount) {
  const std::string path = temp_name("counters") + ".json";
  const TracedRun run = run_xprobe_into(path, {"--format", "perfetto", "-e", "p:t/visit visit n=%di:s64", "--count", "t/visit",
                                               "--interval", "1", "--clear"},
                                        {FILTER_CALLS_PATH, "busy", "3500", "2"});
  ASSERT_EQ(run.xprobe_status, 0) << run.diagnostics;
  long calls = -1;
  ASSERT_EQ(std::sscanf(run.program_output.c_str(), "calls=%ld", &calls), 1) << run.program_output;
  const Rules rules = check_rules(path);
  EXPECT_EQ(rules.status, 0) << rules.problems << rules.summary;
  EXPECT_GE(summary_count(rules.summary, "C", "@visit"), 4) << "three intervals and the end\n" << rules.summary;
  EXPECT_EQ(counter_in(rules.summary, "counter_sums", "@visit", "value"), calls) << rules.summary;
  unlink(path.c_str());
}

TEST(PerfettoFormatInterrupted, SigintStillEndsTheArray) {
  const std::string program = e2e_program("ticker");
  const pid_t child = fork();
  if (child == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execl(program.c_str(), program.c_str(), "100000", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string path = temp_name("interrupted") + ".json";
  const pid_t tracer = fork();
  if (tracer == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(XPROBE_PATH, XPROBE_PATH, "trace", "--format", "perfetto", "-o", path.c_str(), "-p",
          std::to_string(child).c_str(), "-e", "p:t/tick tick x=%di:s64", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int waited = 0; waited < 2000 && read_text_file(path).find("\"tick\"") == std::string::npos; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(tracer, SIGINT);
  int status = 0;
  waitpid(tracer, &status, 0);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string json = read_text_file(path);
  EXPECT_EQ(json.substr(json.size() - 3), "\n]\n");
  const Rules rules = check_rules(path);
  EXPECT_EQ(rules.status, 0) << rules.problems;
  EXPECT_GT(summary_count(rules.summary, "i", "tick"), 0) << rules.summary;
  unlink(path.c_str());
}

// One event as babeltrace2 prints it (--clock-seconds --no-delta), its values turned into the
// text ftrace prints for them: hex in lower case, arrays {a,b}, a faulted string (fault).
struct BabeltraceEvent {
  std::string event;
  unsigned cpu = 0;
  long pid = 0, tid = 0;
  std::string comm;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string field(const std::string& name) const {
    for (const auto& [n, v] : fields)
      if (n == name) return v;
    return "<none>";
  }
};

// "a = 1, s = \"x, y\", arr = [ [0] = 1, [1] = 2 ]" -> pairs, values as ftrace prints them.
std::vector<std::pair<std::string, std::string>> parse_fields(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> fields;
  size_t i = 0;
  auto skip_spaces = [&] { while (i < text.size() && text[i] == ' ') ++i; };
  while (i < text.size()) {
    skip_spaces();
    const size_t equals = text.find(" = ", i);
    if (equals == std::string::npos) break;
    const std::string name = text.substr(i, equals - i);
    i = equals + 3;
    std::string value;
    if (text[i] == '"') {  // a string: unescape
      std::string raw;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        raw += text[i];
      }
      ++i;
      value = raw == "(fault)" ? raw : "\"" + raw + "\"";
    } else if (text[i] == '[') {  // an array: [ [0] = 1, [1] = 2 ]
      const size_t close = text.find(" ]", i);
      std::vector<std::string> elements;
      for (const auto& [index, element] : parse_fields(text.substr(i + 2, close - i - 2))) elements.push_back(element);
      value = "{" + fmt::format("{}", fmt::join(elements, ",")) + "}";
      i = close + 2;
    } else {
      const size_t comma = text.find(", ", i);
      value = text.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
      i = comma == std::string::npos ? text.size() : comma;
      if (value.rfind("0x", 0) == 0)
        for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    fields.emplace_back(name, value);
    if (i < text.size() && text[i] == ',') ++i;
  }
  return fields;
}

std::vector<BabeltraceEvent> read_with_babeltrace(const std::string& directory, std::string* text) {
  int status = -1;
  *text = command_output(fmt::format("{} --clock-seconds --no-delta {} 2>&1", BABELTRACE2_PATH, directory), &status);
  EXPECT_EQ(status, 0) << *text;
  static const std::regex line(
      R"re(^\[[0-9.]+\] \S+ (\S+): \{ cpu_id = (\d+) \}, \{ pid = (\d+), tid = (\d+), comm = "(.*)" \}, \{ (.*) \}$)re");
  std::vector<BabeltraceEvent> events;
  std::istringstream in(*text);
  for (std::string one; std::getline(in, one);) {
    std::smatch m;
    if (!std::regex_match(one, m, line)) {
      ADD_FAILURE() << "babeltrace2 printed an unexpected line: " << one;
      continue;
    }
    BabeltraceEvent e;
    e.event = m[1];
    e.cpu = static_cast<unsigned>(std::stoul(m[2]));
    e.pid = std::stol(m[3]);
    e.tid = std::stol(m[4]);
    e.comm = m[5];
    e.fields = parse_fields(m[6]);
    events.push_back(std::move(e));
  }
  return events;
}

// ftrace's 'c' for a char: CTF has it as the 8-bit integer it is.
std::string as_ctf_value(const std::string& ftrace_value) {
  if (ftrace_value.size() == 3 && ftrace_value.front() == '\'' && ftrace_value.back() == '\'')
    return std::to_string(static_cast<unsigned char>(ftrace_value[1]));
  return ftrace_value;
}

uint64_t hex(const std::string& text) { return std::stoull(text, nullptr, 16); }

class CtfFormat : public ::testing::TestWithParam<std::string> {};

TEST_P(CtfFormat, BabeltraceReadsTheValuesFtraceShowsForTheSameRun) {
  const std::vector<std::string> definitions = {
      "-e", "p:t/many many_args a=$arg1:s64 b=$arg2:s64 g=$arg7:s64 h=$arg8:x64 k=\\42:u32",
      "-e", "p:t/rec take_record id=+0(%di):s32 flags=+4(%di):b3@0/32 mode=+4(%di):b5@3/32 name=+8(%di):string "
            "label=+0(+24(%di)):string values=+32(%di):s64[4] c=+8(%di):char",
      "-e", "p:t/str take_string s=+0(%di):string small=%si:s8 medium=%dx:s16 first=+0(%di):u8 xs=%si:x8",
      "-e", "p:t/bad keep_pointer s=+0(%di):string n=+0(%di):u64",
      "-e", "p:t/in recurse depth=$arg1:s64",
      "-e", "r:t/out recurse ret=$retval:s64 depth=$arg1:s64"};
  std::vector<std::string> args{"--engine", GetParam()};
  args.insert(args.end(), definitions.begin(), definitions.end());
  const std::vector<std::string> command{FETCHARGS_PATH, "3"};
  const RunResult untraced = run_untraced(command);

  const TracedRun as_text = run_xprobe(args, command);
  ASSERT_EQ(as_text.xprobe_status, untraced.exit_status) << as_text.diagnostics;
  const std::string directory = temp_name("ctf");
  (void)std::system(("rm -rf " + directory).c_str());
  std::vector<std::string> ctf_args{"--format", "ctf"};
  ctf_args.insert(ctf_args.end(), args.begin(), args.end());
  const TracedRun as_ctf = run_xprobe_into(directory, ctf_args, command);
  EXPECT_EQ(as_ctf.program_output, untraced.output);
  ASSERT_EQ(as_ctf.xprobe_status, untraced.exit_status) << as_ctf.diagnostics;
  std::string babeltrace_text;
  const std::vector<BabeltraceEvent> ctf = read_with_babeltrace(directory, &babeltrace_text);
  (void)std::system(("rm -rf " + directory).c_str());

  // fetchargs.c, 3 rounds: many, rec, str, 5 in and 5 out, bad per round.
  ASSERT_EQ(as_text.events.size(), 3u * 14) << as_text.trace_text;
  ASSERT_EQ(ctf.size(), as_text.events.size()) << babeltrace_text;
  // Addresses move between the runs (ASLR) but keep their distances: all are in the program.
  const uint64_t text_base = hex(as_text.events[0].location), ctf_base = hex(ctf[0].field("__probe_ip"));
  for (size_t i = 0; i < ctf.size(); ++i) {
    const TraceEvent& f = as_text.events[i];
    const BabeltraceEvent& c = ctf[i];
    SCOPED_TRACE(fmt::format("event {}: {} / {}", i, f.event, c.event));
    EXPECT_EQ(c.event, "t:" + f.event);
    EXPECT_EQ(c.comm, f.comm);
    EXPECT_EQ(c.tid, c.pid);  // one thread: the process's own
    if (f.location.find(" <- ") != std::string::npos) {
      const std::string ret = f.location.substr(0, f.location.find(' '));
      const std::string function = f.location.substr(f.location.find(" <- ") + 4);
      EXPECT_EQ(hex(c.field("__probe_ret_ip")) - ctf_base, hex(ret) - text_base);
      EXPECT_EQ(hex(c.field("__probe_func")) - ctf_base, hex(function) - text_base);
    } else {
      EXPECT_EQ(hex(c.field("__probe_ip")) - ctf_base, hex(f.location) - text_base);
    }
    const size_t address_fields = f.location.find(" <- ") != std::string::npos ? 2 : 1;
    ASSERT_EQ(c.fields.size(), f.args.size() + address_fields);
    for (size_t a = 0; a < f.args.size(); ++a) {
      EXPECT_EQ(c.fields[a + address_fields].first, f.args[a].first);
      EXPECT_EQ(c.fields[a + address_fields].second, as_ctf_value(f.args[a].second)) << f.args[a].first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, CtfFormat, ::testing::Values("trap", "auto"));

TEST(DirectoryAndDocumentFormats, UnusableOutputIsAClearErrorBeforeTheProgramRuns) {
  const std::string marker = temp_name("marker");
  unlink(marker.c_str());
  // Without -o: the events would have nowhere to go.
  TracedRun run = run_xprobe_into("", {"--format", "ctf", "-e", "p:t/in recurse"}, {"/usr/bin/touch", marker});
  EXPECT_EQ(run.xprobe_status, 2);
  EXPECT_NE(run.diagnostics.find("--format ctf writes a trace directory: name it with -o DIR"), std::string::npos)
      << run.diagnostics;
  // -o naming an existing file: it is left alone.
  const std::string file = temp_name("file");
  { FILE* f = std::fopen(file.c_str(), "w"); std::fputs("mine", f); std::fclose(f); }
  run = run_xprobe_into(file, {"--format", "ctf", "-e", "p:t/in recurse"}, {"/usr/bin/touch", marker});
  EXPECT_EQ(run.xprobe_status, 2);
  EXPECT_NE(run.diagnostics.find("-o " + file + ": exists and is not a directory"), std::string::npos) << run.diagnostics;
  EXPECT_EQ(read_text_file(file), "mine");
  // Aggregations are text tables or counter tracks: a CTF trace holds neither.
  const std::string directory = temp_name("aggregated");
  run = run_xprobe_into(directory, {"--format", "ctf", "-e", "p:t/in recurse", "--count", "t/in"}, {"/usr/bin/touch", marker});
  EXPECT_EQ(run.xprobe_status, 2);
  EXPECT_NE(run.diagnostics.find("--format ctf: the aggregations (--hist, --count, --latency, ...) are text tables"),
            std::string::npos)
      << run.diagnostics;
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the program ran";
  unlink(file.c_str());
  rmdir(directory.c_str());
}

}  // namespace
}  // namespace xprobe::testing
