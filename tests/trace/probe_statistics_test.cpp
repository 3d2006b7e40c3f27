#include "trace/probe_statistics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace xprobe::trace {
namespace {

EventCatalog two_events() {
  EventCatalog catalog(2);
  catalog[0].binary = "/tmp/xp/t";
  catalog[0].event = "xpt";
  catalog[1].binary = "/lib/x86_64-linux-gnu/libc.so.6";
  catalog[1].event = "e1";
  return catalog;
}

TEST(ProbeProfile, UprobeProfileLayoutWithMisses) {
  ProbeStatistics statistics;
  statistics.counters(0).hit();
  for (int i = 0; i < 10; ++i) statistics.counters(1).hit();
  statistics.counters(1).miss();
  // The uprobe_profile lines on this machine were "  /tmp/xp/t xpt<41 spaces>... 1": path,
  // event left-aligned in 44, hits right-aligned in 15; the misses column follows in 15.
  EXPECT_EQ(format_profile(two_events(), statistics),
            "  /tmp/xp/t xpt                                                        1               0\n"
            "  /lib/x86_64-linux-gnu/libc.so.6 e1                                                        10               1\n");
}

TEST(ProbeSummary, TableTotalsAndDropped) {
  ProbeStatistics statistics;
  statistics.counters(0).hit();
  statistics.counters(0).hit();
  for (int i = 0; i < 5; ++i) statistics.counters(1).hit();
  statistics.counters(1).miss();
  EventCatalog catalog = two_events();
  catalog[1].probe_point = "/lib/x86_64-linux-gnu/libc.so.6:memcpy";
  const std::string legend =
      "RECORDED: hits whose event was written; MISSED: hits whose event was lost (arguments not fetched, ring or "
      "output full); every hit is in one of them\n";
  // Hits and misses apart: e1's 5 hits are 4 recorded and 1 missed.
  EXPECT_EQ(format_summary(catalog, statistics),
            // "uprobes/xpt" sets the first column to 11; counts are right-aligned in 12.
            "EVENT           RECORDED       MISSED  PROBE POINT\n"
            "uprobes/xpt            2            0  /tmp/xp/t\n"
            "uprobes/e1             4            1  /lib/x86_64-linux-gnu/libc.so.6:memcpy\n"
            "total                  6            1\n" +
                legend);
  statistics.add_dropped(3);
  EXPECT_NE(format_summary(catalog, statistics).find("dropped events: 3\n"), std::string::npos);
}

TEST(ProbeSummary, UnwoundColumnOnlyWhenAFrameWasGivenUp) {
  ProbeStatistics statistics;
  for (int i = 0; i < 3; ++i) statistics.counters(0).hit();
  EventCatalog catalog = two_events();
  EXPECT_EQ(format_summary(catalog, statistics).find("UNWOUND"), std::string::npos);
  // A return probe: 3 returns seen, 2 calls given up without one (not hits: no return was seen).
  statistics.counters(0).add_unwound(2);
  const std::string table = format_summary(catalog, statistics);
  EXPECT_NE(table.find("EVENT           RECORDED       MISSED      UNWOUND  PROBE POINT\n"
                       "uprobes/xpt            3            0            2  /tmp/xp/t\n"
                       "uprobes/e1             0            0            0  /lib/x86_64-linux-gnu/libc.so.6\n"
                       "total                  3            0            2\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("UNWOUND: calls of a return probe given up"), std::string::npos) << table;
}

TEST(ProbeCounters, ConcurrentHitsAreAllCounted) {
  ProbeStatistics statistics;
  ProbeCounters& counters = statistics.counters(0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) counters.hit();
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counters.hits.load(), 40000u);
}

}  // namespace
}  // namespace xprobe::trace
