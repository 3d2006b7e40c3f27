// Unit tests of the simulator's interface and of the cases Unicorn cannot check (BC.cond,
// pointer-authentication stripping, unreadable literals, non-simulated classes).
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "sim/arm64/simulator.h"

namespace xprobe::sim::arm64 {
namespace {

using insn::arm64::decode;

class BufferMemory : public MemoryReader {
 public:
  std::map<uint64_t, uint8_t> bytes;
  int reads = 0;
  void put(uint64_t address, const void* data, size_t length) {
    for (size_t i = 0; i < length; ++i) bytes[address + i] = static_cast<const uint8_t*>(data)[i];
  }
  bool read(uint64_t address, void* buffer, size_t length) override {
    ++reads;
    for (size_t i = 0; i < length; ++i) {
      auto it = bytes.find(address + i);
      if (it == bytes.end()) return false;
      static_cast<uint8_t*>(buffer)[i] = it->second;
    }
    return true;
  }
};

constexpr uint64_t kPc = 0x400100;
constexpr uint32_t kN = 1u << 31, kZ = 1u << 30, kC = 1u << 29, kV = 1u << 28;

TEST(Arm64Simulator, ConditionCodesFollowConditionHolds) {
  EXPECT_TRUE(condition_holds(0x0, kZ));         // EQ
  EXPECT_FALSE(condition_holds(0x0, 0));
  EXPECT_TRUE(condition_holds(0x1, 0));          // NE
  EXPECT_TRUE(condition_holds(0x2, kC));         // CS
  EXPECT_TRUE(condition_holds(0x3, 0));          // CC
  EXPECT_TRUE(condition_holds(0x4, kN));         // MI
  EXPECT_TRUE(condition_holds(0x5, 0));          // PL
  EXPECT_TRUE(condition_holds(0x6, kV));         // VS
  EXPECT_TRUE(condition_holds(0x7, 0));          // VC
  EXPECT_TRUE(condition_holds(0x8, kC));         // HI
  EXPECT_FALSE(condition_holds(0x8, kC | kZ));
  EXPECT_TRUE(condition_holds(0x9, kC | kZ));    // LS
  EXPECT_TRUE(condition_holds(0xa, kN | kV));    // GE
  EXPECT_TRUE(condition_holds(0xb, kN));         // LT
  EXPECT_TRUE(condition_holds(0xc, 0));          // GT
  EXPECT_FALSE(condition_holds(0xc, kZ));
  EXPECT_TRUE(condition_holds(0xd, kZ));         // LE
  EXPECT_TRUE(condition_holds(0xe, 0));          // AL
  EXPECT_TRUE(condition_holds(0xf, kN | kZ | kC | kV));  // NV behaves as always
}

TEST(Arm64Simulator, BranchWithLinkAndInputUntouched) {
  BufferMemory memory;
  Registers regs;
  regs.x[30] = 0x1234;
  const auto result = simulate(decode(0x94000010, kPc), kPc, regs, memory);  // bl .+0x40
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->pc, kPc + 0x40);
  EXPECT_EQ(result->x[30], kPc + 4);
  EXPECT_EQ(regs.x[30], 0x1234u);
}

TEST(Arm64Simulator, ConsistentConditionalBranchIsAConditionalBranch) {
  BufferMemory memory;
  Registers regs;
  const auto bcne = decode(0x54ffffd1, kPc);  // bc.ne .-8
  regs.nzcv = kZ;
  EXPECT_EQ(simulate(bcne, kPc, regs, memory)->pc, kPc + 4);
  regs.nzcv = 0;
  EXPECT_EQ(simulate(bcne, kPc, regs, memory)->pc, kPc - 8);
}

TEST(Arm64Simulator, CompareAndBranchUsesTheOperandWidth) {
  BufferMemory memory;
  Registers regs;
  regs.x[1] = 0xffffffff00000000;
  EXPECT_EQ(simulate(decode(0x34000041, kPc), kPc, regs, memory)->pc, kPc + 8);  // cbz w1: low half zero
  EXPECT_EQ(simulate(decode(0xb4000041, kPc), kPc, regs, memory)->pc, kPc + 4);  // cbz x1
  EXPECT_EQ(simulate(decode(0x3400005f, kPc), kPc, regs, memory)->pc, kPc + 8);  // cbz wzr always taken
}

TEST(Arm64Simulator, TestBitBranches) {
  BufferMemory memory;
  Registers regs;
  regs.x[4] = uint64_t{1} << 63;
  EXPECT_EQ(simulate(decode(0xb7ffffc4, kPc), kPc, regs, memory)->pc, kPc - 8);  // tbnz x4, #63
  regs.x[4] = 0;
  EXPECT_EQ(simulate(decode(0xb7ffffc4, kPc), kPc, regs, memory)->pc, kPc + 4);
}

TEST(Arm64Simulator, AdrpComputesFromThePage) {
  BufferMemory memory;
  Registers regs;
  const uint64_t pc = 0x400ffc;
  const auto result = simulate(decode(0xb0000001, pc), pc, regs, memory);  // adrp x1, page + 1
  EXPECT_EQ(result->x[1], 0x401000u);
  EXPECT_EQ(result->pc, pc + 4);
  const auto discard = simulate(decode(0x3000001f, pc), pc, regs, memory);  // adr xzr: nothing written
  EXPECT_EQ(discard->x, regs.x);
}

TEST(Arm64Simulator, LiteralLoadsExtendAndClear) {
  BufferMemory memory;
  const uint64_t literal = kPc + 8;
  const uint8_t bytes[16] = {0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12, 1, 2, 3, 4, 5, 6, 7, 8};
  memory.put(literal, bytes, sizeof bytes);
  Registers regs;
  regs.x[0] = ~uint64_t{0};
  regs.v[0].fill(0xee);
  EXPECT_EQ(simulate(decode(0x18000040, kPc), kPc, regs, memory)->x[0], 0x9abcdef0u);          // ldr w0
  EXPECT_EQ(simulate(decode(0x58000040, kPc), kPc, regs, memory)->x[0], 0x123456789abcdef0u);  // ldr x0
  EXPECT_EQ(simulate(decode(0x98000040, kPc), kPc, regs, memory)->x[0], 0xffffffff9abcdef0u);  // ldrsw x0
  const auto s = simulate(decode(0x1c000040, kPc), kPc, regs, memory);                         // ldr s0
  std::array<uint8_t, 16> expected{};
  std::memcpy(expected.data(), bytes, 4);
  EXPECT_EQ(s->v[0], expected);
  const auto q = simulate(decode(0x9c000040, kPc), kPc, regs, memory);  // ldr q0
  std::memcpy(expected.data(), bytes, 16);
  EXPECT_EQ(q->v[0], expected);
}

TEST(Arm64Simulator, UnreadableLiteralIsAnError) {
  BufferMemory memory;
  const uint8_t partial[4] = {1, 2, 3, 4};
  memory.put(kPc + 8, partial, 4);  // an 8-byte literal with only 4 readable bytes
  Registers regs;
  const auto result = simulate(decode(0x58000040, kPc), kPc, regs, memory);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("0x400108"), std::string::npos) << result.error().message;
}

TEST(Arm64Simulator, PrefetchReadsNothing) {
  BufferMemory memory;
  Registers regs;
  const auto result = simulate(decode(0xd8000040, kPc), kPc, regs, memory);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->pc, kPc + 4);
  EXPECT_EQ(memory.reads, 0);
}

TEST(Arm64Simulator, BranchAndLinkToTheLinkRegister) {
  BufferMemory memory;
  Registers regs;
  regs.x[30] = 0x7000;
  const auto result = simulate(decode(0xd63f03c0, kPc), kPc, regs, memory);  // blr x30
  EXPECT_EQ(result->pc, 0x7000u);
  EXPECT_EQ(result->x[30], kPc + 4);
}

TEST(Arm64Simulator, PointerAuthenticationModes) {
  BufferMemory memory;
  Registers regs;
  regs.x[30] = 0x002a'7fff'1234'5678;  // a PAC in bits 54:48 of a user address
  const auto retaa = decode(0xd65f0bff, kPc);
  EXPECT_EQ(simulate(retaa, kPc, regs, memory)->pc, regs.x[30]);
  SimulateOptions strip;
  strip.pointer_auth = PointerAuth::StripAssumingSuccess;
  EXPECT_EQ(simulate(retaa, kPc, regs, memory, strip)->pc, 0x7fff'1234'5678u);
  regs.x[8] = 0xff80'8000'0000'1000;  // bit 55 set: the PAC field becomes ones
  EXPECT_EQ(simulate(decode(0xd71f0909, kPc), kPc, regs, memory, strip)->pc, 0xffff'8000'0000'1000u);
  EXPECT_EQ(simulate(decode(0xd61f0100, kPc), kPc, regs, memory, strip)->pc, regs.x[8]);  // plain br: untouched
}

TEST(Arm64Simulator, NonSimulatedClassesAreErrors) {
  BufferMemory memory;
  Registers regs;
  for (uint32_t word : {0x8b020020u /* add */, 0xd4000001u /* svc */, 0xc85f7c20u /* ldxr */, 0u /* udf */}) {
    const auto result = simulate(decode(word, kPc), kPc, regs, memory);
    EXPECT_FALSE(result.ok()) << std::hex << word;
  }
}

}  // namespace
}  // namespace xprobe::sim::arm64
