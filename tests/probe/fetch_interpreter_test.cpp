#include <gtest/gtest.h>

#include "fake_process.h"
#include "probe/definition_parser.h"
#include "probe/fetch_program.h"

namespace xprobe::probe {
namespace {

using testing::FakeMemory;
using testing::FakeRegisters;

// x86-64 user_regs_struct indices.
constexpr RegisterId kAx = 10, kCx = 11, kDx = 12, kSi = 13, kDi = 14, kSp = 19;

class FetchInterpreterTest : public ::testing::Test {
 protected:
  std::vector<FetchedValue> fetch(std::string_view definition, std::optional<uint64_t> return_address = std::nullopt,
                                  std::vector<uint64_t> saved = {}) {
    auto parsed = parse_definition(definition, ParseOptions{arch});
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().render());
    if (!parsed.ok()) return {};
    plan = compile_fetch_plan(parsed.value(), arch);
    saved_ = std::move(saved);
    const FetchEnvironment environment{registers, memory, "worker", return_address, saved_};
    return run_all(plan, environment);
  }

  insn::Arch arch = insn::Arch::X86_64;
  FakeRegisters registers;
  FakeMemory memory;
  ProbeFetchPlan plan;
  std::vector<uint64_t> saved_;
};

TEST_F(FetchInterpreterTest, RegistersTruncateToTheType) {
  registers.values[kCx] = 0xfffffffffffffffbull;  // -5
  const auto v = fetch("p foo %cx %cx:s64 %cx:x32 %cx:u8 %cx:s16 %cx:x8");
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0].numbers, std::vector<uint64_t>{0xfffffffffffffffbull});
  EXPECT_EQ(v[1].numbers, std::vector<uint64_t>{0xfffffffffffffffbull});
  EXPECT_EQ(v[2].numbers, std::vector<uint64_t>{0xfffffffbull});
  EXPECT_EQ(v[3].numbers, std::vector<uint64_t>{0xfbu});
  EXPECT_EQ(v[4].numbers, std::vector<uint64_t>{0xfffbu});
  EXPECT_EQ(v[5].numbers, std::vector<uint64_t>{0xfbu});
  for (const auto& value : v) EXPECT_FALSE(value.fault);
}

TEST_F(FetchInterpreterTest, NestedDereferences) {
  registers.values[kDi] = 0x1000;
  memory.map_u64(0x1000, {0x2000, 0x3000});          // [0x1000] = 0x2000, [0x1008] = 0x3000
  memory.map_u64(0x2000, {0, 0x11223344aabbccddull});  // [0x2008]
  memory.map_u64(0x3000, {0x4000});
  memory.map_u64(0x4000, {0x55});
  const auto v = fetch("p foo +8(+0(%di)):u64 +0(+0(+8(%di))):u8 +4(+0(%di)):x32 -8(+8(+0(%di))):u64");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].numbers[0], 0x11223344aabbccddull);
  EXPECT_EQ(v[1].numbers[0], 0x55u);
  EXPECT_EQ(v[2].numbers[0], 0u);  // [0x2004], the upper half of the zero word
  // -8 from [0x2008] = 0x11223344aabbccdd - 8 -> unmapped
  EXPECT_TRUE(v[3].fault);
  EXPECT_EQ(v[3].numbers, std::vector<uint64_t>{0});
}

TEST_F(FetchInterpreterTest, FaultsAreRecordedNotFatal) {
  registers.values[kDx] = 0x10;  // a bad pointer
  const auto v = fetch("p foo +0(%dx):u64 +0(%dx):string +0(%dx):u16[2] +0(%dx):string[2] +8(+0(%dx)):u32");
  ASSERT_EQ(v.size(), 5u);
  EXPECT_TRUE(v[0].fault);
  EXPECT_EQ(v[0].numbers, std::vector<uint64_t>{0});
  EXPECT_TRUE(v[1].fault);
  ASSERT_EQ(v[1].strings.size(), 1u);
  EXPECT_FALSE(v[1].strings[0].has_value());
  EXPECT_EQ(v[2].numbers, (std::vector<uint64_t>{0, 0}));
  ASSERT_EQ(v[3].strings.size(), 2u);
  EXPECT_FALSE(v[3].strings[0].has_value());
  EXPECT_FALSE(v[3].strings[1].has_value());
  EXPECT_TRUE(v[4].fault);
}

TEST_F(FetchInterpreterTest, Strings) {
  registers.values[kSi] = 0x5000;
  memory.map_string(0x5000, "world\n\"q");
  const auto v = fetch("p foo +0(%si):string +2(%si):ustring \\0x5000:string $comm \\\"lit\"");
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].strings[0], std::optional<std::string>("world\n\"q"));
  EXPECT_EQ(v[1].strings[0], std::optional<std::string>("rld\n\"q"));
  EXPECT_EQ(v[2].strings[0], std::optional<std::string>("world\n\"q"));
  EXPECT_EQ(v[3].strings[0], std::optional<std::string>("worker"));
  EXPECT_EQ(v[4].strings[0], std::optional<std::string>("lit"));
}

TEST_F(FetchInterpreterTest, StringWithoutTerminatorBeforeUnmappedMemoryFaults) {
  registers.values[kSi] = 0x6000;
  memory.map(0x6000, std::vector<uint8_t>(100, 'a'));  // no NUL, then nothing
  const auto v = fetch("p foo +0(%si):string");
  EXPECT_TRUE(v[0].fault);
  EXPECT_FALSE(v[0].strings[0].has_value());
}

TEST_F(FetchInterpreterTest, LongStringsAreCutAtTheKernelBound) {
  registers.values[kSi] = 0x10000;
  memory.map(0x10000, std::vector<uint8_t>(3 * 4096, 'z'));  // longer than MAX_STRING_SIZE, no NUL
  const auto v = fetch("p foo +0(%si):string");
  ASSERT_TRUE(v[0].strings[0].has_value());
  EXPECT_EQ(v[0].strings[0]->size(), kMaxStringSize - 1);
  EXPECT_FALSE(v[0].fault);
}

TEST_F(FetchInterpreterTest, StringCrossingAPageBoundary) {
  registers.values[kSi] = 0x10ffe;
  std::vector<uint8_t> bytes(2 * 4096, 'x');
  bytes[0xffe - 0] = 'a';
  memory.map(0x10000, bytes);
  memory.ranges[0x10000][0x1005] = 0;  // NUL 7 bytes after the start, on the next page
  const auto v = fetch("p foo +0(%si):string");
  ASSERT_TRUE(v[0].strings[0].has_value());
  EXPECT_EQ(*v[0].strings[0], "axxxxxx");
}

TEST_F(FetchInterpreterTest, StringsAroundTheFirstReadSize) {
  // Strings are read 256 bytes first, then in doubling chunks: check the edges.
  registers.values[kSi] = 0x30000;
  registers.values[kDi] = 0x40000;
  registers.values[kDx] = 0x50000;
  memory.map_string(0x30000, std::string(255, 'a'));
  memory.map_string(0x40000, std::string(256, 'b'));
  memory.map_string(0x50000, std::string(1000, 'c'));
  const auto v = fetch("p foo +0(%si):string +0(%di):string +0(%dx):string");
  EXPECT_EQ(v[0].strings[0], std::optional<std::string>(std::string(255, 'a')));
  EXPECT_EQ(v[1].strings[0], std::optional<std::string>(std::string(256, 'b')));
  EXPECT_EQ(v[2].strings[0], std::optional<std::string>(std::string(1000, 'c')));
}

TEST_F(FetchInterpreterTest, StringArraysReadPointerArrays) {
  registers.values[kDi] = 0x7000;
  memory.map_u64(0x7000, {0x7100, 0x10, 0x7200});
  memory.map_string(0x7100, "one");
  memory.map_string(0x7200, "three");
  const auto v = fetch("p foo +0(%di):string[3]");
  ASSERT_EQ(v[0].strings.size(), 3u);
  EXPECT_EQ(v[0].strings[0], std::optional<std::string>("one"));
  EXPECT_FALSE(v[0].strings[1].has_value());
  EXPECT_EQ(v[0].strings[2], std::optional<std::string>("three"));
  EXPECT_TRUE(v[0].fault);
}

TEST_F(FetchInterpreterTest, ArraysAndChars) {
  registers.values[kDi] = 0x8000;
  memory.map(0x8000, {1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 3, 0, 0, 0, 'w', 'o', 'r'});
  const auto v = fetch("p foo +0(%di):s32[3] +12(%di):char +12(%di):char[3] +0(%di):x16[2]");
  EXPECT_EQ(v[0].numbers, (std::vector<uint64_t>{1, 0xfffffffe, 3}));
  EXPECT_EQ(v[1].numbers, std::vector<uint64_t>{'w'});
  EXPECT_EQ(v[2].numbers, (std::vector<uint64_t>{'w', 'o', 'r'}));
  EXPECT_EQ(v[3].numbers, (std::vector<uint64_t>{1, 0}));
}

TEST_F(FetchInterpreterTest, Bitfields) {
  // a:3 = 5, b:5 = 17, c:24 = 1234 packed from bit 0 of a little-endian u32.
  const uint32_t packed = 5u | (17u << 3) | (1234u << 8);
  registers.values[kDi] = 0x9000;
  memory.map(0x9000, {static_cast<uint8_t>(packed), static_cast<uint8_t>(packed >> 8), static_cast<uint8_t>(packed >> 16),
                      static_cast<uint8_t>(packed >> 24)});
  registers.values[kAx] = 0xf0000000u;
  const auto v = fetch("p foo +0(%di):b3@0/32 +0(%di):b5@3/32 +0(%di):b24@8/32 %ax:b4@28/32 +0(%di):b1@0/8[4]");
  EXPECT_EQ(v[0].numbers[0], 5u);
  EXPECT_EQ(v[1].numbers[0], 17u);
  EXPECT_EQ(v[2].numbers[0], 1234u);
  EXPECT_EQ(v[3].numbers[0], 0xfu);
  // bit 0 of each byte: 0x2d, 0xd2 (1234 << 8 & 0xff00 >> 8 ...), computed from `packed` by hand.
  EXPECT_EQ(v[4].numbers, (std::vector<uint64_t>{packed & 1, (packed >> 8) & 1, (packed >> 16) & 1, (packed >> 24) & 1}));
}

TEST_F(FetchInterpreterTest, StackAndArguments) {
  registers.values[kSp] = 0xa000;
  registers.values[kDi] = 1;
  registers.values[kSi] = 2;
  registers.values[9] = 5;   // r8
  registers.values[8] = 6;   // r9
  memory.map_u64(0xa000, {0x401234, 7, 8});  // return address, then $arg7, $arg8
  const auto v = fetch("p foo $arg1 $arg2 $arg5 $arg6 $arg7 $arg8 $stack $stack0 rp s2");
  ASSERT_EQ(v.size(), 10u);
  const uint64_t expected[] = {1, 2, 5, 6, 7, 8, 0xa000, 0x401234, 0x401234, 8};
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(v[i].numbers[0], expected[i]) << i;
}

TEST_F(FetchInterpreterTest, ReturnProbeUsesSavedArgumentsAndReturnAddress) {
  registers.values[kAx] = 0x18;
  registers.values[kDi] = 111;
  registers.values[kSi] = 222;
  auto parsed = parse_definition("r foo $retval rv rp a1 $arg2");
  ASSERT_TRUE(parsed.ok());
  const ProbeFetchPlan return_plan = compile_fetch_plan(parsed.value(), arch);
  const std::vector<uint64_t> saved = capture_entry_arguments(return_plan, registers, memory);
  EXPECT_EQ(saved, (std::vector<uint64_t>{111, 222}));
  registers.values[kDi] = 0;  // clobbered by the function
  const FetchEnvironment environment{registers, memory, "t", uint64_t{0x5573da5021a3}, saved};
  const auto v = run_all(return_plan, environment);
  const uint64_t expected[] = {0x18, 0x18, 0x5573da5021a3, 111, 222};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(v[i].numbers[0], expected[i]) << i;
  // Without what the engine saved, the value is a fault, not garbage.
  const FetchEnvironment missing{registers, memory, "t", std::nullopt, {}};
  EXPECT_TRUE(run(return_plan.arguments[2], missing).fault);
  EXPECT_TRUE(run(return_plan.arguments[3], missing).fault);
}

TEST_F(FetchInterpreterTest, SymbolRelocations) {
  auto parsed = parse_definition("p foo @counter+4:u32 v=@counter:u64");
  ASSERT_TRUE(parsed.ok());
  ProbeFetchPlan symbol_plan = compile_fetch_plan(parsed.value(), arch);
  memory.map_u64(0xb000, {0x0000000700000009ull});
  const FetchEnvironment environment{registers, memory, "t", std::nullopt, {}};
  EXPECT_TRUE(run(symbol_plan.arguments[0], environment).fault);  // unresolved
  for (auto& program : symbol_plan.arguments) program.relocations[0].address = 0xb000;
  EXPECT_EQ(run(symbol_plan.arguments[0], environment).numbers[0], 7u);
  EXPECT_EQ(run(symbol_plan.arguments[1], environment).numbers[0], 0x0000000700000009ull);
}

TEST_F(FetchInterpreterTest, I386WordsAreFourBytes) {
  arch = insn::Arch::I386;
  registers.values[15] = 0xc000;  // esp
  memory.map(0xc000, {0x78, 0x56, 0x34, 0x12, 0x44, 0x33, 0x22, 0x11, 0x00, 0xd0, 0, 0});
  memory.map(0xd000, {0xef, 0xbe, 0xad, 0xde});
  const auto v = fetch("p foo a1 a2 +0($stack2):x32 $stack0");
  EXPECT_EQ(v[0].numbers[0], 0x11223344u);
  EXPECT_EQ(v[1].numbers[0], 0xd000u);
  EXPECT_EQ(v[2].numbers[0], 0xdeadbeefu);
  EXPECT_EQ(v[3].numbers[0], 0x12345678u);
  EXPECT_EQ(v[0].type.name(), "x32");
}

TEST_F(FetchInterpreterTest, AArch64Arguments) {
  arch = insn::Arch::AArch64;
  registers.values[0] = 10;
  registers.values[7] = 17;
  registers.values[30] = 0x400800;
  registers.values[31] = 0xe000;
  memory.map_u64(0xe000, {90});
  const auto v = fetch("p foo a1 a8 a9 rp");
  const uint64_t expected[] = {10, 17, 90, 0x400800};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(v[i].numbers[0], expected[i]) << i;
}

}  // namespace
}  // namespace xprobe::probe

namespace xprobe::probe {
namespace {

// Memory that, like a real address space, is readable in whole pages only; exercises the
// default MemoryReader::read_up_to.
class PagedMemory final : public MemoryReader {
 public:
  bool read(uint64_t address, std::span<uint8_t> out) override {
    if (out.empty()) return true;
    const uint64_t last = address + out.size() - 1;
    if (address < 0x20000 || last >= 0x22000) return false;  // two mapped pages
    for (size_t i = 0; i < out.size(); ++i) out[i] = (address + i == 0x21ffa) ? 0 : static_cast<uint8_t>('m');
    return true;
  }
};

TEST(DefaultReadUpTo, StopsAtTheFirstUnreadablePage) {
  PagedMemory memory;
  std::vector<uint8_t> buffer(3 * 4096);
  EXPECT_EQ(memory.read_up_to(0x20ff0, buffer), 0x22000u - 0x20ff0u);
  EXPECT_EQ(memory.read_up_to(0x1fff0, buffer), 0u);
}

TEST(DefaultReadUpTo, StringsEndingOnTheLastMappedPage) {
  PagedMemory memory;
  testing::FakeRegisters registers;
  registers.values[13] = 0x21ff0;  // %si
  auto parsed = parse_definition("p foo +0(%si):string +4096(%si):string");
  ASSERT_TRUE(parsed.ok());
  const ProbeFetchPlan plan = compile_fetch_plan(parsed.value(), insn::Arch::X86_64);
  const FetchEnvironment environment{registers, memory, "t", std::nullopt, {}};
  const auto values = run_all(plan, environment);
  EXPECT_EQ(values[0].strings[0], std::optional<std::string>(std::string(10, 'm')));
  EXPECT_TRUE(values[1].fault);
}

}  // namespace
}  // namespace xprobe::probe
