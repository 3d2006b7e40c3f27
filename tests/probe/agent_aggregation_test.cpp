// The tracer's reader of the agent's aggregation tables: what it reads is the traced program's
// memory, so any bytes at all must give either entries or a clear error, never a crash, and the
// corruptions the reader can see are named.
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "probe/agent_aggregation.h"

namespace xprobe::probe {
namespace {

std::vector<uint8_t> entries_bytes(const std::vector<agent::AgentAggEntry>& entries) {
  std::vector<uint8_t> bytes(entries.size() * sizeof(agent::AgentAggEntry));
  std::memcpy(bytes.data(), entries.data(), bytes.size());
  return bytes;
}

TEST(AgentTablePairReader, RandomTablesGiveEntriesOrAnErrorNeverACrash) {
  std::mt19937_64 random(15);
  for (int round = 0; round < 3000; ++round) {
    const uint32_t max_entries = 1u << (random() % 6);
    AgentTablePairReader reader(0, max_entries, {agent::kFoldSum, agent::kFoldMin, agent::kFoldMax});
    agent::AgentAggTableHeader header = agent_table_header(max_entries, 1.0);
    if (random() % 4 == 0) {
      std::vector<uint8_t> noise(sizeof header);
      for (uint8_t& b : noise) b = static_cast<uint8_t>(random());
      std::memcpy(&header, noise.data(), sizeof header);
    } else {
      header.entries = random() % 3 == 0 ? random() : random() % (2 * max_entries + 1);
      header.dropped = random() % 100;
    }
    const uint64_t count = reader.entries_to_read(header);
    ASSERT_LE(count, max_entries);
    std::vector<uint8_t> entries(random() % 2 ? count * sizeof(agent::AgentAggEntry) : random() % 4096);
    for (uint8_t& b : entries) b = static_cast<uint8_t>(random() % 3 == 0 ? random() : 0);
    // Mostly small states and counts, so some entries pass the checks.
    for (size_t at = 0; at + sizeof(agent::AgentAggEntry) <= entries.size(); at += sizeof(agent::AgentAggEntry))
      if (random() % 2) entries[at] = static_cast<uint8_t>(random() % 2), std::memset(&entries[at + 1], 0, 7);
    auto update = reader.entries_of(header, entries);
    if (!update) {
      EXPECT_NE(update.error().message.find("the aggregation table is corrupt: "), std::string::npos);
      continue;
    }
    EXPECT_LE(update->entries.size(), max_entries);
  }
}

// A pair whose memory is noise: an error or an update, and no write outside the pair.
TEST(AgentTablePairReader, ANoisyPairGivesAnErrorOrAnUpdateAndWritesOnlyInsideIt) {
  std::mt19937_64 random(16);
  for (int round = 0; round < 300; ++round) {
    const uint32_t max_entries = 1u << (random() % 5);
    std::vector<uint8_t> memory(agent::agg_pair_bytes(max_entries));
    for (uint8_t& b : memory) b = static_cast<uint8_t>(random() % 5 == 0 ? random() : 0);
    if (random() % 2) {
      const agent::AgentAggTablePair pair = agent_pair_header(max_entries);
      std::memcpy(memory.data(), &pair, sizeof pair);
      for (uint64_t t = 0; t < 2; ++t) {
        agent::AgentAggTableHeader header = agent_table_header(max_entries, 1.0);
        header.entries = random() % (2 * max_entries + 2);
        std::memcpy(memory.data() + agent::agg_pair_table_offset(max_entries, t), &header, sizeof header);
      }
    }
    const uint64_t base = 0x10000;
    auto inside = [&](uint64_t at, size_t size) { return at >= base && at - base + size <= memory.size(); };
    const AggregationMemory access{[&](uint64_t at, std::span<uint8_t> into) {
                                     if (!inside(at, into.size())) return false;
                                     std::memcpy(into.data(), memory.data() + (at - base), into.size());
                                     return true;
                                   },
                                   [&](uint64_t at, std::span<const uint8_t> bytes) {
                                     EXPECT_TRUE(inside(at, bytes.size())) << "a write outside the pair";
                                     if (!inside(at, bytes.size())) return false;
                                     std::memcpy(memory.data() + (at - base), bytes.data(), bytes.size());
                                     return true;
                                   }};
    AgentTablePairReader reader(base, max_entries, {});
    for (int read = 0; read < 3; ++read) {
      auto update = reader.collect(access, read == 2);
      if (!update) break;
      if (update->has_value()) {
        EXPECT_LE((*update)->entries.size(), max_entries);
      }
    }
  }
}

TEST(AgentTablePairReader, TwoEntriesOfOneKeyABadStateAndAnOverwrittenHeaderAreCorruption) {
  AgentTablePairReader reader(0, 4, {agent::kFoldSum});
  agent::AgentAggTableHeader header = agent_table_header(4, 1.0);
  header.entries = 2;
  header.dropped = 3;
  std::vector<agent::AgentAggEntry> entries(2);
  entries[0].ready = 1;
  entries[0].hitcount = 5;
  entries[0].key[0] = 42;
  entries[0].values[0] = 100;
  entries[1].key[0] = 42;  // a key that lost its race: never published
  entries[1].hitcount = 9;
  auto update = reader.entries_of(header, entries_bytes(entries));
  ASSERT_TRUE(update) << update.error().message;
  ASSERT_EQ(update->entries.size(), 1u);
  EXPECT_EQ(update->entries[0].hitcount, 5u);
  EXPECT_EQ(update->entries[0].values[0], 100u);
  EXPECT_EQ(update->dropped, 3u);

  entries[1].ready = 1;
  update = reader.entries_of(header, entries_bytes(entries));
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().message, "the aggregation table is corrupt: entries 0 and 1 have the same key");
  entries[1].ready = 2;
  update = reader.entries_of(header, entries_bytes(entries));
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().message, "the aggregation table is corrupt: entry 1 has the state 0x2");

  header.magic = 0;
  update = reader.entries_of(header, {});
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().message, "the aggregation table is corrupt: its header's magic was overwritten");
  header = agent_table_header(4, 1.0);
  header.max_entries = 1u << 30;
  update = reader.entries_of(header, {});
  ASSERT_FALSE(update);
  EXPECT_NE(update.error().message.find("its size changed"), std::string::npos);
}

}  // namespace
}  // namespace xprobe::probe
