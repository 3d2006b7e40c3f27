// Nothing lost silently: with a hit rate above what the output can take, every event is kept
// (a slow reader blocks xprobe) or counted as missed, per probe, exactly:
// hits = events written + misses.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "torture_support.h"

namespace xprobe::torture {
namespace {

std::string flood() { return std::string(TORTURE_PROGRAMS_DIR) + "/flood"; }

const std::vector<std::string> kFloodProbes{"-e", "p:d/a hit_a x=%di:s64", "-e", "p:d/b hit_b x=%di:s64"};

// Complete JSON event lines per event name ("d/a"); a fragment without its newline is not an event.
std::map<std::string, uint64_t> complete_events(const std::string& text) {
  std::map<std::string, uint64_t> counts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    const std::string line = text.substr(start, end - start);
    const std::string prefix = "{\"event\":\"";
    if (line.rfind(prefix, 0) == 0 && line.back() == '}') {
      const size_t close = line.find('"', prefix.size());
      ++counts[line.substr(prefix.size(), close - prefix.size())];
    }
    start = end + 1;
  }
  return counts;
}

WorkloadRun traced_flood(const std::string& output, long n, const std::string& engine = "auto") {
  std::vector<std::string> argv{xprobe_path(), "trace", "--engine", engine, "--summary", "--format", "json", "-o", output};
  argv.insert(argv.end(), kFloodProbes.begin(), kFloodProbes.end());
  argv.insert(argv.end(), {"--", flood(), std::to_string(n)});
  return run_command(argv, 240);
}

// The flood program hits d/a n times and d/b for every third i.
void expect_exact_accounting(const WorkloadRun& run, const std::map<std::string, uint64_t>& written, long n,
                             const std::string& label) {
  const XprobeStderr split = split_stderr(run.err);
  ASSERT_EQ(split.rows.size(), 2u) << run.err;
  uint64_t total_written = 0, total_missed = 0;
  for (const auto& row : split.rows) {
    const uint64_t in_file = written.count(row.event) ? written.at(row.event) : 0;
    EXPECT_EQ(row.hits, row.event == "d/a" ? static_cast<uint64_t>(n) : static_cast<uint64_t>((n + 2) / 3)) << row.event;
    EXPECT_EQ(in_file + row.misses, row.hits) << label << " " << row.event << ": " << in_file << " in the output, "
                                              << row.misses << " counted missed, " << row.hits << " hits";
    total_written += in_file;
    total_missed += row.misses;
  }
  EXPECT_EQ(split.dropped, total_missed);
  record_summary(label, fmt::format("hits={} written={} missed={} {}", split.total_hits, total_written, total_missed,
                                    ::testing::Test::HasFailure() ? "FAIL (see torture-findings #5)" : "PASS"));
}

// A reader slower than the events: with breakpoints the traced thread waits for its event to
// be written, so nothing is dropped; jump-optimized probes never make the program wait (as
// with the kernel's trace buffer): what the ring cannot hold is dropped, and counted exactly.
void slow_reader_run(const std::string& engine) {
  const long n = full_run() ? 200000 : 20000;
  const std::string fifo = temp_file("events.fifo", "");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    const int fd = open(fifo.c_str(), O_RDONLY);
    char buffer[4096];
    ssize_t got;
    while ((got = read(fd, buffer, sizeof buffer)) > 0) {
      received.append(buffer, static_cast<size_t>(got));
      std::this_thread::sleep_for(std::chrono::microseconds(500));  // slower than the events come
    }
    close(fd);
  });
  const WorkloadRun run = traced_flood(fifo, n, engine);
  reader.join();
  EXPECT_EQ(run.status, 0) << run.err;
  const auto written = complete_events(received);
  expect_exact_accounting(run, written, n, "drops/slow-pipe-" + engine);
  const XprobeStderr split = split_stderr(run.err);
  if (engine == "trap") {
    EXPECT_EQ(split.total_misses, 0u) << "a slow reader blocks xprobe; nothing needs to be dropped";
  }
}

TEST(Drops, SlowReaderOnAPipeLosesNothingWithBreakpoints) { slow_reader_run("trap"); }

TEST(Drops, SlowReaderOnAPipeDropsOnlyWhatItCountsWithJumps) { slow_reader_run("jump"); }

TEST(Drops, FullDeviceCountsEveryEventAsMissed) {
  const long n = 3000;
  const WorkloadRun run = traced_flood("/dev/full", n);
  EXPECT_EQ(run.status, 0) << run.err;
  expect_exact_accounting(run, {}, n, "drops/dev-full");
}

TEST(Drops, TinyTmpfsCountIsExact) {
  const std::string dir = temp_file("tiny", "");
  unlink(dir.c_str());
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  if (mount("none", dir.c_str(), "tmpfs", 0, "size=64k") != 0) GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
  const long n = full_run() ? 200000 : 20000;
  const WorkloadRun run = traced_flood(dir + "/events", n);
  const std::string text = read_file(dir + "/events");
  umount(dir.c_str());
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_LE(text.size(), 64u * 1024);
  expect_exact_accounting(run, complete_events(text), n, "drops/tmpfs-64k");
}

}  // namespace
}  // namespace xprobe::torture
