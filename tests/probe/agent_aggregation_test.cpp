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

TEST(AgentTableReader, RandomBytesGiveEntriesOrAnErrorNeverACrash) {
  std::mt19937_64 random(15);
  for (int round = 0; round < 3000; ++round) {
    const uint32_t max_entries = 1u << (random() % 6);
    AgentTableReader reader(max_entries, {agent::kFoldSum, agent::kFoldMin, agent::kFoldMax});
    for (int read = 0; read < 4; ++read) {
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
      std::vector<uint8_t> first(random() % 2 ? count * sizeof(agent::AgentAggEntry) : random() % 4096);
      for (uint8_t& b : first) b = static_cast<uint8_t>(random() % 3 == 0 ? random() : 0);
      // Mostly small states and counts, so some entries pass the checks.
      for (size_t at = 0; at + sizeof(agent::AgentAggEntry) <= first.size(); at += sizeof(agent::AgentAggEntry))
        if (random() % 2) first[at] = static_cast<uint8_t>(random() % 2), std::memset(&first[at + 1], 0, 7);
      std::vector<uint8_t> second = first;
      if (random() % 4 == 0 && !second.empty()) second[random() % second.size()] ^= 1;
      auto update = reader.update(header, first, second);
      if (!update) {
        EXPECT_NE(update.error().message.find("the aggregation table is corrupt: "), std::string::npos);
        break;
      }
      EXPECT_LE(update->entries.size(), max_entries);
    }
  }
}

TEST(AgentTableReader, CountsGoingBackwardsAndAnOverwrittenHeaderAreCorruption) {
  AgentTableReader reader(4, {agent::kFoldSum});
  agent::AgentAggTableHeader header = agent_table_header(4, 1.0);
  header.entries = 1;
  std::vector<agent::AgentAggEntry> entries(1);
  entries[0].ready = 1;
  entries[0].hitcount = 5;
  entries[0].key[0] = 42;
  entries[0].values[0] = 100;
  auto update = reader.update(header, entries_bytes(entries), entries_bytes(entries));
  ASSERT_TRUE(update);
  ASSERT_EQ(update->entries.size(), 1u);
  EXPECT_EQ(update->entries[0].hitcount, 5u);
  // Later reads give what changed since.
  entries[0].hitcount = 7;
  entries[0].values[0] = 130;
  update = reader.update(header, entries_bytes(entries), entries_bytes(entries));
  ASSERT_TRUE(update);
  ASSERT_EQ(update->entries.size(), 1u);
  EXPECT_EQ(update->entries[0].hitcount, 2u);
  EXPECT_EQ(update->entries[0].values[0], 30u);
  // An entry that differs between the two reads is being updated: left for the next read.
  std::vector<agent::AgentAggEntry> moving = entries;
  moving[0].hitcount = 8;
  update = reader.update(header, entries_bytes(entries), entries_bytes(moving));
  ASSERT_TRUE(update);
  EXPECT_TRUE(update->entries.empty());

  entries[0].hitcount = 3;
  update = reader.update(header, entries_bytes(entries), entries_bytes(entries));
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().message, "the aggregation table is corrupt: entry 0's hit count went backwards");

  AgentTableReader other(4, {});
  entries[0].key[0] = 1;
  ASSERT_TRUE(other.update(header, entries_bytes(entries), entries_bytes(entries)));
  entries[0].key[0] = 2;
  entries[0].hitcount = 9;
  update = other.update(header, entries_bytes(entries), entries_bytes(entries));
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().message, "the aggregation table is corrupt: entry 0 changed its key");

  header.magic = 0;
  update = AgentTableReader(4, {}).update(header, {}, {});
  ASSERT_FALSE(update);
  EXPECT_EQ(update.error().message, "the aggregation table is corrupt: its header's magic was overwritten");
  header = agent_table_header(4, 1.0);
  header.max_entries = 1u << 30;
  update = AgentTableReader(4, {}).update(header, {}, {});
  ASSERT_FALSE(update);
  EXPECT_NE(update.error().message.find("its size changed"), std::string::npos);
}

}  // namespace
}  // namespace xprobe::probe
