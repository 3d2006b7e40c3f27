// Aggregations end to end. The kernel here has no hist triggers, so the oracle of --hist is
// the kernel's own filtered events of the same probe, counted and summed by key; each line is
// checked against the kernel's format strings (trace_events_hist.c, histogram.rst). Latency is
// checked against the program's own clock_gettime timing of each call.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "test_support.h"
#include "filter_calls.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

uint64_t ilog2_roundup(uint64_t v) {
  uint64_t power = 0;
  while ((uint64_t{1} << power) < v) ++power;
  return power;
}

struct Expected {
  uint64_t hitcount = 0;
  int64_t n_sum = 0;
};

// The hist file of `trigger`, checked line by line against the entries `expected` (key text as
// the kernel prints it -> counts), in an order the sort allows.
void expect_hist_file(const std::string& output, const std::string& trigger_info,
                      const std::map<std::string, Expected>& expected, bool with_n) {
  const std::vector<std::string> lines = lines_of(output);
  const std::vector<std::string> header = {"# event histogram", "#", "# trigger info: " + trigger_info, "#", ""};
  size_t at = 0;
  while (at < lines.size() && lines[at] != header[0]) ++at;
  ASSERT_LT(at, lines.size()) << output;
  for (size_t i = 0; i < header.size(); ++i) ASSERT_EQ(lines.at(at + i), header[i]) << output;
  at += header.size();
  std::map<std::string, Expected> seen;
  uint64_t last_hitcount = 0, hits = 0;
  for (; at < lines.size() && !lines[at].empty(); ++at) {
    const std::string& line = lines[at];
    bool matched = false;
    for (const auto& [key, entry] : expected) {
      std::string want = fmt::format("{{ {} }} hitcount: {:>10}", key, entry.hitcount);
      if (with_n) want += fmt::format("  n: {:>10}", static_cast<uint64_t>(entry.n_sum));
      if (line == want) {
        matched = true;
        seen[key] = entry;
        EXPECT_GE(entry.hitcount, last_hitcount) << "sort=hitcount is ascending:\n" << output;
        last_hitcount = entry.hitcount;
        hits += entry.hitcount;
      }
    }
    EXPECT_TRUE(matched) << "unexpected entry line: '" << line << "'\n" << output;
  }
  EXPECT_EQ(seen.size(), expected.size()) << output;
  ASSERT_LT(at + 4, lines.size()) << output;
  EXPECT_EQ(lines[at + 1], "Totals:");
  EXPECT_EQ(lines[at + 2], fmt::format("    Hits: {}", hits));
  EXPECT_EQ(lines[at + 3], fmt::format("    Entries: {}", expected.size()));
  EXPECT_EQ(lines[at + 4], "    Dropped: 0");
}

TEST(HistOracle, KernelsFilteredEventsCountedByKeyAreTheHistEntries) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "120"};
  const std::string filter = "n < 400 && name != \"zeta\"";
  KernelRun kernel = run_under_kernel_uprobes({visit_definition()}, command, {{"xpt_oracle/visit", filter}});
  if (!kernel.skip_reason.empty()) GTEST_SKIP() << kernel.skip_reason;
  ASSERT_GT(kernel.events.size(), 10u);
  std::map<std::string, Expected> by_name, by_log2;
  for (const TraceEvent& event : kernel.events) {
    std::string name = event.arg("name");
    name = name.substr(1, name.size() - 2);  // the kernel quotes it
    const int64_t n = std::stoll(event.arg("n"));
    const uint64_t u = std::stoull(event.arg("u"));
    Expected& e = by_name[fmt::format("name: {:<50}", name)];
    ++e.hitcount;
    e.n_sum += n;
    ++by_log2[fmt::format("u: ~ 2^{:<2}", ilog2_roundup(u))].hitcount;
  }
  for (const char* engine : {"trap", "jump"}) {
    TracedRun xprobe = run_xprobe({"--engine", engine, "--summary", "-e", visit_definition(), "--hist",
                                   "xpt_oracle/visit:hist:keys=name:vals=n:sort=hitcount if " + filter, "--hist",
                                   "xpt_oracle/visit:hist:keys=u.log2 if " + filter},
                                  command, false);
    ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
    // Jump-optimized, both tables are the agent's: no hit crossed the ring.
    if (std::string(engine) == "jump") {
      EXPECT_EQ(summary_counts(xprobe.diagnostics, "xpt_oracle/visit").ring_records, 0);
    }
    // Aggregated hits are not printed as events.
    EXPECT_EQ(xprobe.events.size(), 0u) << xprobe.trace_text;
    const std::string text = xprobe.trace_text;
    const size_t second = text.find("# event histogram", text.find("# event histogram") + 1);
    ASSERT_NE(second, std::string::npos) << text;
    expect_hist_file(text.substr(0, second),
                     "hist:keys=name:vals=hitcount,n:sort=hitcount:size=2048 if " + filter + " [active]", by_name, true);
    expect_hist_file(text.substr(second), "hist:keys=u.log2:vals=hitcount:sort=hitcount:size=2048 if " + filter + " [active]",
                     by_log2, false);
  }
}

TEST(HistOracle, SizeLimitsTheEntriesAndCountsTheDropped) {
  // On breakpoints the tracer's table drops; jump-optimized, the agent's table in the program.
  for (const char* engine : {"trap", "jump"}) {
    TracedRun xprobe = run_xprobe({"--engine", engine, "--summary", "-e", visit_definition(), "--hist",
                                   "xpt_oracle/visit:hist:keys=n:size=4"},
                                  {FILTER_CALLS_PATH, "visits", "10"}, false);
    ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
    // Ten distinct n: the first four get entries, six hits are dropped.
    EXPECT_NE(xprobe.trace_text.find("    Hits: 4\n    Entries: 4\n    Dropped: 6\n"), std::string::npos)
        << engine << "\n" << xprobe.trace_text;
    if (std::string(engine) == "jump") {
      EXPECT_EQ(summary_counts(xprobe.diagnostics, "xpt_oracle/visit").ring_records, 0);
    }
  }
}

// Jump-optimized, the agent folds an aggregated hit into a table in the program's memory: the
// ring is never touched, every hit is still counted, and the tables print exactly what the
// tracer computes from the trap engine's events.
TEST(AggregationInTheAgent, AggregatedHitsWriteNoRingRecordAndPrintAsTheTracersTables) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "150"};
  const std::vector<std::pair<std::string, std::string>> aggregations = {
      {"--hist", "xpt_oracle/visit:hist:keys=name:vals=n,u:sort=hitcount if n < 400 && name != \"zeta\""},
      {"--hist", "xpt_oracle/visit:hist:keys=u.log2,s:vals=n:sort=s.descending"},
      {"--hist", "xpt_oracle/visit:hist:keys=n.buckets=100,name:sort=n"},
      {"--hist", "xpt_oracle/visit:hist:keys=s.hex:pause"},
      {"--count", "xpt_oracle/visit:name"},
      {"--hist", "xpt_oracle/visit:n"},
      {"--lhist", "xpt_oracle/visit:n:0:500:50:name"},
      {"--sum", "xpt_oracle/visit:s:name"},
      {"--avg", "xpt_oracle/visit:n"},
      {"--min", "xpt_oracle/visit:s:name"},
      {"--max", "xpt_oracle/visit:n"},
  };
  for (const auto& [option, value] : aggregations) {
    TracedRun trap = run_xprobe({"--engine", "trap", "-e", visit_definition(), option, value}, command, false);
    TracedRun jump = run_xprobe({"--engine", "jump", "--summary", "-e", visit_definition(), option, value}, command, false);
    ASSERT_EQ(trap.xprobe_status, 0) << trap.diagnostics;
    ASSERT_EQ(jump.xprobe_status, 0) << jump.diagnostics;
    EXPECT_FALSE(jump.trace_text.empty()) << value;
    EXPECT_EQ(jump.trace_text, trap.trace_text) << option << " " << value;
    const SummaryCounts counts = summary_counts(jump.diagnostics, "xpt_oracle/visit");
    EXPECT_EQ(counts.ring_records, 0) << value << "\n" << jump.diagnostics;
    EXPECT_EQ(counts.recorded + counts.filtered, 150) << value << "\n" << jump.diagnostics;
  }
}

// What the agent cannot compute is aggregated by the tracer from ring records: the thread's
// name, a key only the tracer knows.
TEST(AggregationInTheAgent, KeysOnlyTheTracerKnowsCrossTheRing) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "40"};
  for (const std::string value : {"xpt_oracle/visit:hist:keys=common_pid.execname", "xpt_oracle/visit:hist:keys=n if comm != \"x\""}) {
    TracedRun jump = run_xprobe({"--engine", "jump", "--summary", "-e", visit_definition(), "--hist", value}, command, false);
    ASSERT_EQ(jump.xprobe_status, 0) << jump.diagnostics;
    EXPECT_NE(jump.trace_text.find("    Hits: 40\n"), std::string::npos) << jump.trace_text;
    EXPECT_EQ(summary_counts(jump.diagnostics, "xpt_oracle/visit").ring_records, 40) << value << "\n" << jump.diagnostics;
  }
}

// :pause, :cont and :clear as the kernel registers them: on a trigger like an existing one they
// command it; a new trigger given :pause starts paused (with nothing to continue it, it stays so);
// :cont or :clear of no trigger, or the same trigger twice, is refused.
TEST(HistOracle, PauseContAndClearActAsTheKernelsTriggerCommands) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "12"};
  const std::string trigger = "xpt_oracle/visit:hist:keys=n";
  for (const char* engine : {"trap", "jump"}) {
    TracedRun paused = run_xprobe({"--engine", engine, "-e", visit_definition(), "--hist", trigger + ":pause"}, command, false);
    ASSERT_EQ(paused.xprobe_status, 0) << paused.diagnostics;
    EXPECT_NE(paused.trace_text.find("# trigger info: hist:keys=n:vals=hitcount:sort=hitcount:size=2048 [paused]\n"),
              std::string::npos)
        << paused.trace_text;
    EXPECT_NE(paused.trace_text.find("    Hits: 0\n    Entries: 0\n"), std::string::npos) << paused.trace_text;
    TracedRun continued = run_xprobe(
        {"--engine", engine, "-e", visit_definition(), "--hist", trigger + ":pause", "--hist", trigger + ":cont"}, command, false);
    ASSERT_EQ(continued.xprobe_status, 0) << continued.diagnostics;
    EXPECT_NE(continued.trace_text.find("size=2048 [active]\n"), std::string::npos) << continued.trace_text;
    EXPECT_NE(continued.trace_text.find("    Hits: 12\n    Entries: 12\n"), std::string::npos) << continued.trace_text;
    // One table: the second option was a command to the first.
    EXPECT_EQ(continued.trace_text.find("# event histogram", continued.trace_text.find("# event histogram") + 1), std::string::npos);
  }
  for (const std::vector<std::string>& refused : std::vector<std::vector<std::string>>{
           {"--hist", trigger + ":cont"}, {"--hist", trigger + ":clear"}, {"--hist", trigger, "--hist", trigger}}) {
    std::vector<std::string> arguments{"-e", visit_definition()};
    arguments.insert(arguments.end(), refused.begin(), refused.end());
    TracedRun xprobe = run_xprobe(arguments, command, false);
    EXPECT_NE(xprobe.xprobe_status, 0) << refused.back();
    EXPECT_EQ(xprobe.program_output, "");
    const bool exists = refused.size() == 4;
    EXPECT_NE(xprobe.diagnostics.find(exists ? "Hist trigger already exists" : "Can't clear or continue a nonexistent hist trigger"),
              std::string::npos)
        << xprobe.diagnostics;
  }
}

// The value modifiers .percent and .graph (histogram.rst): a value's share of its total as
// "NAME (%): PPP.pp", and a bar of up to 20 '#' against its largest, for each entry; checked
// against the calls the program makes (filter_calls.c: name kNames[(i * 5) % 8], u = i * 2654435761).
TEST(HistOracle, PercentAndGraphValuesAreSharesOfTheirTotalAndLargest) {
  const char* const names[] = {"alpha", "beta", "gamma", "delta", "epsilon", "alphabet", "zeta", "beta-max"};
  constexpr int kCalls = 83;
  std::map<std::string, std::pair<uint64_t, uint64_t>> expected;  // name -> hits, sum of u
  uint64_t total_hits = 0, largest_u = 0;
  for (int i = 0; i < kCalls; ++i) {
    auto& [hits, u] = expected[names[(i * 5) % 8]];
    ++hits;
    u += static_cast<uint32_t>(static_cast<uint32_t>(i) * 2654435761u);
    ++total_hits;
  }
  for (const auto& [name, entry] : expected) largest_u = std::max(largest_u, entry.second);
  for (const char* engine : {"trap", "jump"}) {
    TracedRun xprobe = run_xprobe({"--engine", engine, "-e", visit_definition(), "--hist",
                                   "xpt_oracle/visit:hist:keys=name:vals=hitcount.percent,u.graph,u"},
                                  {FILTER_CALLS_PATH, "visits", std::to_string(kCalls)}, false);
    ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
    EXPECT_NE(xprobe.trace_text.find("# trigger info: hist:keys=name:vals=hitcount,u.graph,u:sort=hitcount:size=2048 [active]"),
              std::string::npos)
        << xprobe.trace_text;
    for (const auto& [name, entry] : expected) {
      const uint64_t pc = entry.first * 10000 / total_hits;
      const size_t bar = static_cast<size_t>(entry.second * 10000 / largest_u * 20 / 10000);
      const std::string line = fmt::format("{{ name: {:<50} }} hitcount (%): {:>3}.{:02}  u: {:<20}  u: {:>10}", name, pc / 100,
                                           pc % 100, std::string(bar, '#'), entry.second);
      EXPECT_NE(xprobe.trace_text.find(line + "\n"), std::string::npos) << engine << ": " << line << "\n" << xprobe.trace_text;
    }
  }
}

TEST(HistOracle, BadTriggersAreRefusedBeforeAnythingStarts) {
  for (const std::string trigger : {"hist:keys=nosuch", "hist:keys=n:sort=u", "hist:keys=name.log2", "hist:vals=n"}) {
    TracedRun xprobe = run_xprobe({"-e", visit_definition(), "--hist", "xpt_oracle/visit:" + trigger},
                                  {FILTER_CALLS_PATH, "visits", "3"}, false);
    EXPECT_NE(xprobe.xprobe_status, 0) << trigger;
    EXPECT_EQ(xprobe.program_output, "") << trigger;
    EXPECT_NE(xprobe.diagnostics.find(trigger), std::string::npos) << xprobe.diagnostics;
  }
}

// bpftrace's count() keyed by a string: one "@visit[NAME]: N" line per name, as many as the
// kernel's events of each name.
TEST(Summaries, CountByKeyMatchesTheKernelsEvents) {
  const std::vector<std::string> command{FILTER_CALLS_PATH, "visits", "90"};
  KernelRun kernel = run_under_kernel_uprobes({visit_definition()}, command);
  if (!kernel.skip_reason.empty()) GTEST_SKIP() << kernel.skip_reason;
  std::map<std::string, int> counts;
  for (const TraceEvent& event : kernel.events) ++counts[event.arg("name").substr(1, event.arg("name").size() - 2)];
  TracedRun xprobe = run_xprobe({"-e", visit_definition(), "--count", "xpt_oracle/visit:name"}, command, false);
  ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
  for (const auto& [name, count] : counts)
    EXPECT_NE(xprobe.trace_text.find(fmt::format("@visit[{}]: {}\n", name, count)), std::string::npos)
        << name << "\n" << xprobe.trace_text;
}

// bcc funclatency's rows per key (the call's argument k, saved at entry): every call lands in a
// bucket between its spin time's and the time the program itself measured around the call.
TEST(Latency, EachCallsTimeLiesBetweenItsSpinAndTheProgramsOwnMeasure) {
  const std::string bin = FILTER_CALLS_PATH;
  const std::string definition = fmt::format("r:xpt_oracle/timed {}:timed_call%return k=$arg1:s64", bin);
  const std::vector<std::string> command{bin, "timed", "40"};
  const uint64_t spin_ns[] = {3000, 24000, 48000, 100000};
  auto bucket_of = [](uint64_t ns) {  // bcc's bpf_log2l()
    int b = 0;
    while (ns != 0) {
      ++b;
      ns >>= 1;
    }
    return b;
  };
  for (const char* engine : {"trap", "jump"}) {
    TracedRun xprobe =
        run_xprobe({"--engine", engine, "--summary", "-e", definition, "--latency", "xpt_oracle/timed:k"}, command, false);
    ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
    // Jump-optimized, the agent measures each call and folds it into its table.
    if (std::string(engine) == "jump") {
      EXPECT_EQ(summary_counts(xprobe.diagnostics, "xpt_oracle/timed").ring_records, 0);
    }
    // The program's "call K NS" lines.
    std::map<int, uint64_t> longest, calls;
    for (const std::string& line : lines_of(xprobe.program_output)) {
      int k = 0;
      unsigned long long ns = 0;
      ASSERT_EQ(std::sscanf(line.c_str(), "call %d %llu", &k, &ns), 2) << line;
      longest[k] = std::max<uint64_t>(longest[k], ns);
      ++calls[k];
    }
    ASSERT_EQ(calls.size(), 4u) << xprobe.program_output;
    // "\nk = K\n" then bcc's header and rows "LOW -> HIGH : COUNT |stars|", then the average.
    const std::vector<std::string> lines = lines_of(xprobe.trace_text);
    int key = -1;
    std::map<int, uint64_t> counted;
    for (const std::string& line : lines) {
      if (std::sscanf(line.c_str(), "k = %d", &key) == 1) continue;
      if (line == "     nsecs               : count     distribution") continue;
      unsigned long long low = 0, high = 0, count = 0;
      if (std::sscanf(line.c_str(), "%llu -> %llu : %llu |", &low, &high, &count) != 3) continue;
      ASSERT_GE(key, 0) << xprobe.trace_text;
      ASSERT_LT(key, 4);
      EXPECT_EQ(line, fmt::format("{:>10} -> {:<10} : {:<8} |", low, high, count) + line.substr(line.find('|') + 1))
          << "bcc's row format";
      const int bucket = bucket_of(high);
      if (count == 0) continue;
      counted[key] += count;
      EXPECT_GE(bucket, bucket_of(spin_ns[key])) << "k=" << key << ": faster than its spin?\n" << xprobe.trace_text;
      EXPECT_LE(bucket, bucket_of(longest[key])) << "k=" << key << ": slower than the program measured\n" << xprobe.trace_text;
    }
    for (const auto& [k, n] : calls) EXPECT_EQ(counted[k], n) << "k=" << k << " (--engine " << engine << ")\n" << xprobe.trace_text;
    EXPECT_NE(xprobe.trace_text.find("avg = "), std::string::npos);
  }
}

// --interval prints the tables while tracing; with --clear each print starts them again, so the
// counts of all the prints (the last one at the end) add up to every call.
TEST(Summaries, IntervalPrintsAndClearAddUpToEveryCall) {
  const std::string bin = FILTER_CALLS_PATH;
  TracedRun xprobe = run_xprobe({"-e", fmt::format("p:xpt_oracle/timed {}:timed_call", bin), "--count", "xpt_oracle/timed",
                                 "--interval", "1", "--clear"},
                                {bin, "timed", "40000"}, false);
  ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
  long total = 0, prints = 0, stamps = 0;
  for (const std::string& line : lines_of(xprobe.trace_text)) {
    long count = 0;
    int h = 0, m = 0, sec = 0;
    if (std::sscanf(line.c_str(), "@timed: %ld", &count) == 1) {
      total += count;
      ++prints;
    }
    if (line.size() == 8 && std::sscanf(line.c_str(), "%d:%d:%d", &h, &m, &sec) == 3) ++stamps;
  }
  EXPECT_EQ(total, 40000) << xprobe.trace_text;
  // 40000 calls of 44 µs on average: at least one print while tracing, then the last one.
  EXPECT_GE(stamps, 1) << xprobe.trace_text;
  EXPECT_EQ(prints, stamps + 1) << xprobe.trace_text;
}

// Two threads call visit() as fast as they can for 3.5 s and count their calls: with --interval
// and --clear, the prints (each of a table the agent no longer writes to, emptied after) add up
// to the program's own count exactly, and the prints while it runs see the hits of their second.
TEST(Summaries, IntervalClearTakesEveryHitOfABusyProgramExactlyOnce) {
  const std::string bin = FILTER_CALLS_PATH;
  TracedRun xprobe = run_xprobe({"--engine", "jump", "--summary", "-e", visit_definition(), "--count", "xpt_oracle/visit",
                                 "--hist", "xpt_oracle/visit:hist:keys=n", "--interval", "1", "--clear"},
                                {bin, "busy", "3500", "2"}, false);
  ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
  long calls = -1;
  ASSERT_EQ(std::sscanf(xprobe.program_output.c_str(), "calls=%ld", &calls), 1) << xprobe.program_output;
  ASSERT_GT(calls, 10000);
  std::vector<long> counts, hits;
  for (const std::string& line : lines_of(xprobe.trace_text)) {
    long n = 0;
    if (std::sscanf(line.c_str(), "@visit: %ld", &n) == 1) counts.push_back(n);
    if (std::sscanf(line.c_str(), "    Hits: %ld", &n) == 1) hits.push_back(n);
  }
  ASSERT_GE(counts.size(), 3u) << xprobe.trace_text;  // three prints while running, then the last
  ASSERT_EQ(hits.size(), counts.size()) << xprobe.trace_text;
  long counted = 0, hit = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    counted += counts[i];
    hit += hits[i];
    if (i + 2 < counts.size()) {
      EXPECT_GT(counts[i], 0) << "print " << i << " while the program ran\n" << xprobe.trace_text;
    }
  }
  EXPECT_EQ(counted, calls) << xprobe.trace_text;
  EXPECT_EQ(hit, calls) << xprobe.trace_text;
  const SummaryCounts summary = summary_counts(xprobe.diagnostics, "xpt_oracle/visit");
  EXPECT_EQ(summary.ring_records, 0) << "every hit was aggregated in the agent\n" << xprobe.diagnostics;
}

// What gdb says the frames of a thread stopped at visit's first instruction are: "symbol+0xoff"
// of frame 0 (visit itself), frame 1 (main, where it returns) and frame 2 (main's caller).
std::vector<std::string> gdb_frames_at_visit() {
  const std::string command = fmt::format(
      "gdb -batch -nx -ex 'break *visit' -ex run -ex 'info symbol $pc' -ex 'frame 1' -ex 'info symbol $pc' "
      "-ex 'frame 2' -ex 'info symbol $pc' -ex kill --args {} visits 3 2>/dev/null",
      FILTER_CALLS_PATH);
  std::vector<std::string> frames;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return frames;
  char buffer[1024];
  while (fgets(buffer, sizeof buffer, pipe)) {
    char symbol[256] = {};
    unsigned long offset = 0;
    const std::string line = buffer;
    if (line.find(" in section ") == std::string::npos) continue;
    if (std::sscanf(buffer, "%255s + %lu in section", symbol, &offset) == 2) frames.push_back(fmt::format("{}+{:#x}", symbol, offset));
    else if (std::sscanf(buffer, "%255s in section", symbol) == 1) frames.push_back(fmt::format("{}+0x0", symbol));
  }
  pclose(pipe);
  return frames;
}

// hist:keys=common_stacktrace keys on the thread's user stack: its frames are the ones gdb
// unwinds (visit, main, main's caller in libc), printed as the kernel prints a stack key.
TEST(HistOracle, StacktraceKeysAreTheThreadsUserStackAsGdbUnwindsIt) {
  const std::vector<std::string> expected = gdb_frames_at_visit();
  ASSERT_EQ(expected.size(), 3u) << "gdb's frames";
  TracedRun xprobe = run_xprobe({"--summary", "-e", visit_definition(), "--hist", "xpt_oracle/visit:hist:keys=stacktrace"},
                                {FILTER_CALLS_PATH, "visits", "50"}, false);
  ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
  const std::vector<std::string> lines = lines_of(xprobe.trace_text);
  size_t at = 0;
  while (at < lines.size() && lines[at] != "# event histogram") ++at;
  ASSERT_LT(at + 6, lines.size()) << xprobe.trace_text;
  EXPECT_EQ(lines[at + 2], "# trigger info: hist:keys=common_stacktrace:vals=hitcount:sort=hitcount:size=2048 [active]");
  EXPECT_EQ(lines[at + 5], "{ common_stacktrace:") << xprobe.trace_text;
  at += 6;
  // Each frame: 9 spaces, then %pS (symbol+0xoff/0xsize).
  size_t frame = 0;
  for (; at < lines.size() && lines[at].rfind("         ", 0) == 0; ++at, ++frame) {
    const std::string text = lines[at].substr(9);
    // main's caller is in libc, whose local symbols only gdb's debug data names: xprobe
    // prints the bare address there, as the kernel's %pS does without a symbol.
    if (frame < 2 || (frame == 2 && text.rfind("0x", 0) != 0)) {
      EXPECT_EQ(text.substr(0, text.find('/')), expected[frame]) << xprobe.trace_text;
    }
    if (frame >= 2 && text.rfind("0x", 0) == 0) continue;
    EXPECT_NE(text.find('/'), std::string::npos) << text;
  }
  EXPECT_GE(frame, 3u) << xprobe.trace_text;
  EXPECT_LE(frame, 16u);
  ASSERT_LT(at, lines.size());
  EXPECT_EQ(lines[at], fmt::format("}} hitcount: {:>10}", 50)) << xprobe.trace_text;
  EXPECT_EQ(lines[at + 2], "Totals:");
  EXPECT_EQ(lines[at + 3], "    Hits: 50");
  EXPECT_EQ(lines[at + 4], "    Entries: 1");
  // The agent does not walk stacks: --engine jump says so before anything runs.
  TracedRun jumped = run_xprobe({"--engine", "jump", "-e", visit_definition(), "--hist",
                                 "xpt_oracle/visit:hist:keys=common_stacktrace"},
                                {FILTER_CALLS_PATH, "visits", "5"}, false);
  EXPECT_NE(jumped.xprobe_status, 0);
  EXPECT_NE(jumped.diagnostics.find("cannot be jump-optimized: a hist is keyed on common_stacktrace"), std::string::npos)
      << jumped.diagnostics;
}

// .sym and .sym-offset name a return address as gdb does (visit returns into main), printed
// with the kernel's "[%llx] %-45ps" and "[%llx] %-55pS"; .execname as "%-16s[%10llu]"; a second
// sort field orders what the first leaves equal (120 visits: each of the 8 names 15 times).
TEST(HistOracle, SymbolAndExecnameKeysAndASecondSortFieldPrintAsTheKernels) {
  const std::vector<std::string> expected = gdb_frames_at_visit();
  ASSERT_EQ(expected.size(), 3u) << "gdb's frames";
  const std::string bin = FILTER_CALLS_PATH;
  const std::string ret = fmt::format("r:xpt_oracle/vret {}:{:#x}", bin, file_offset_of(bin, "visit"));
  for (const char* engine : {"trap", "jump"}) {
    TracedRun xprobe = run_xprobe({"--engine", engine, "-e", ret, "-e", visit_definition(), "--hist",
                                   "xpt_oracle/vret:hist:keys=__probe_ret_ip.sym-offset", "--hist",
                                   "xpt_oracle/vret:hist:keys=__probe_ret_ip.sym", "--hist",
                                   "xpt_oracle/visit:hist:keys=common_pid.execname", "--hist",
                                   "xpt_oracle/visit:hist:keys=name:sort=hitcount,name.descending"},
                                  {bin, "visits", "120"}, false);
    ASSERT_EQ(xprobe.xprobe_status, 0) << xprobe.diagnostics;
    const std::regex sym_offset("\\{ __probe_ret_ip: \\[[0-9a-f]+\\] (.{55}) \\} hitcount: +120");
    const std::regex sym("\\{ __probe_ret_ip: \\[[0-9a-f]+\\] (.{45}) \\} hitcount: +120");
    const std::regex execname("\\{ common_pid: filter_calls    \\[ *[0-9]{1,10}\\] \\} hitcount: +120");
    bool saw_offset = false, saw_sym = false, saw_execname = false;
    std::vector<std::string> names;
    for (const std::string& line : lines_of(xprobe.trace_text)) {
      std::smatch match;
      if (std::regex_match(line, match, sym_offset)) {
        std::string text = match[1].str();
        text = text.substr(0, text.find(' '));
        EXPECT_EQ(text.substr(0, text.find('/')), expected[1]) << line;
        saw_offset = true;
      } else if (std::regex_match(line, match, sym)) {
        std::string text = match[1].str();
        EXPECT_EQ(text.substr(0, text.find(' ')), expected[1].substr(0, expected[1].find('+'))) << line;
        saw_sym = true;
      }
      if (std::regex_match(line, execname)) saw_execname = true;
      char name[64] = {};
      if (std::sscanf(line.c_str(), "{ name: %63s", name) == 1) {
        EXPECT_NE(line.find("} hitcount:         15"), std::string::npos) << line;
        names.push_back(name);
      }
    }
    EXPECT_TRUE(saw_offset && saw_sym && saw_execname) << engine << "\n" << xprobe.trace_text;
    const std::vector<std::string> descending{"zeta", "gamma", "epsilon", "delta", "beta-max", "beta", "alphabet", "alpha"};
    EXPECT_EQ(names, descending) << engine << "\n" << xprobe.trace_text;
  }
  // The kernel's messages for sort fields it refuses.
  for (const auto& [trigger, message] : std::vector<std::pair<std::string, std::string>>{
           {"hist:keys=n:sort=n,u,hitcount", "Too many sort fields (Max = 2)"},
           {"hist:keys=n:sort=n.up", "Invalid sort modifier: up"},
           {"hist:keys=n:sort=u", "Sort field must be a key or a val: u"}}) {
    TracedRun refused = run_xprobe({"-e", visit_definition(), "--hist", "xpt_oracle/visit:" + trigger}, {bin, "visits", "3"}, false);
    EXPECT_NE(refused.xprobe_status, 0);
    EXPECT_NE(refused.diagnostics.find(message), std::string::npos) << refused.diagnostics;
  }
}

}  // namespace
}  // namespace xprobe::testing
