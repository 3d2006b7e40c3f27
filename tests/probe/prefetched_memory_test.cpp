#include "probe/prefetched_memory.h"

#include <gtest/gtest.h>

#include "fake_process.h"
#include "probe/definition_parser.h"
#include "probe/fetch_program.h"

namespace xprobe::probe {
namespace {

TEST(PrefetchedMemory, AHitWithItsStackPrefetchedNeedsNoFurtherReads) {
  testing::FakeRegisters registers;
  testing::FakeMemory process;
  registers.values[19] = 0xa000;  // %sp
  process.map_u64(0xa000, {0x401234, 7, 8, 9});
  auto parsed = parse_definition("p foo $stack0 $stack3 $arg7 $arg8 rp");
  ASSERT_TRUE(parsed.ok());
  const ProbeFetchPlan plan = compile_fetch_plan(parsed.value(), insn::Arch::X86_64);
  ASSERT_EQ(plan.stack_words_read, 4u);

  // What an engine does: one read of the whole window, then the programs.
  std::vector<uint8_t> window(plan.stack_words_read * 8);
  ASSERT_TRUE(process.read(0xa000, window));
  process.reads = 0;
  PrefetchedMemory memory(process);
  memory.add_block(0xa000, window);
  const FetchEnvironment environment{registers, memory, "t", std::nullopt, {}};
  const auto values = run_all(plan, environment);
  const uint64_t expected[] = {0x401234, 9, 7, 8, 0x401234};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(values[i].numbers[0], expected[i]) << i;
  EXPECT_EQ(memory.fallback_reads(), 0u);
  EXPECT_EQ(process.reads, 0);
}

TEST(PrefetchedMemory, ReadsOutsideOrAcrossBlocksFallThrough) {
  testing::FakeMemory process;
  process.map(0x1000, std::vector<uint8_t>(64, 0xaa));
  PrefetchedMemory memory(process);
  memory.add_block(0x1000, std::vector<uint8_t>(16, 0x11));
  std::vector<uint8_t> out(32);
  ASSERT_TRUE(memory.read(0x1008, out));  // 8 bytes from the block, 24 from the process
  EXPECT_EQ(out[0], 0x11);
  EXPECT_EQ(out[7], 0x11);
  EXPECT_EQ(out[8], 0xaa);
  EXPECT_EQ(memory.fallback_reads(), 1u);
  EXPECT_FALSE(memory.read(0x9000, out));
  std::vector<uint8_t> big(100);
  EXPECT_EQ(memory.read_up_to(0x1000, big), 64u);  // 16 prefetched + 48 more from the process
  memory.clear();
  EXPECT_EQ(memory.read_up_to(0x1000, big), 64u);
  EXPECT_EQ(big[0], 0xaa);
}

}  // namespace
}  // namespace xprobe::probe
