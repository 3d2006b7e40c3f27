#include "target/maps.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace xprobe::target {
namespace {

TEST(MapsTest, ParsesEveryField) {
  auto maps = parse_maps(
      "55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567                    /usr/bin/cat\n"
      "55d0c0a02000-55d0c0a07000 r-xp 00002000 fd:01 1234567                    /usr/bin/cat\n"
      "7ffd1c9e0000-7ffd1ca01000 rw-p 00000000 00:00 0                          [stack]\n"
      "7f0000000000-7f0000001000 rw-s 00000000 00:05 99                         /dev/zero (deleted)\n"
      "7f0000002000-7f0000003000 ---p 00000000 00:00 0 \n");
  ASSERT_TRUE(maps) << maps.error().message;
  ASSERT_EQ(maps->size(), 5u);
  const MapEntry& text = (*maps)[1];
  EXPECT_EQ(text.start, 0x55d0c0a02000u);
  EXPECT_EQ(text.end, 0x55d0c0a07000u);
  EXPECT_TRUE(text.readable);
  EXPECT_FALSE(text.writable);
  EXPECT_TRUE(text.executable);
  EXPECT_FALSE(text.shared);
  EXPECT_EQ(text.offset, 0x2000u);
  EXPECT_EQ(text.inode, 1234567u);
  EXPECT_EQ(text.path, "/usr/bin/cat");
  EXPECT_EQ((*maps)[2].path, "[stack]");
  EXPECT_TRUE((*maps)[3].shared);
  EXPECT_EQ((*maps)[3].path, "/dev/zero (deleted)");
  EXPECT_EQ((*maps)[4].path, "");
  EXPECT_FALSE((*maps)[4].readable);
  EXPECT_EQ(find_mapping(*maps, 0x55d0c0a06fff), &(*maps)[1]);
  EXPECT_EQ(find_mapping(*maps, 0x55d0c0a07000 + 0x100000), nullptr);
}

TEST(MapsTest, RefusesMalformedLinesNamingThem) {
  auto maps = parse_maps("1000-2000 r-xp 00000000 fd:01 1 /a\nnot a line\n");
  ASSERT_FALSE(maps);
  EXPECT_EQ(maps.error().message, "malformed maps line 2: 'not a line'");
  EXPECT_FALSE(parse_maps("2000-1000 r-xp 00000000 fd:01 1 /a\n"));
  EXPECT_FALSE(parse_maps("1000-2000 r-xp 00000000 fd01 1 /a\n"));
  EXPECT_FALSE(parse_maps("1000-2000 r\n"));
}

TEST(MapsTest, ReadsOurOwnMaps) {
  auto maps = read_maps(getpid());
  ASSERT_TRUE(maps);
  int on_stack = 0;
  const MapEntry* stack = find_mapping(*maps, reinterpret_cast<uint64_t>(&on_stack));
  ASSERT_NE(stack, nullptr);
  EXPECT_TRUE(stack->writable);
  EXPECT_GT(maps->size(), 5u);
}

}  // namespace
}  // namespace xprobe::target
