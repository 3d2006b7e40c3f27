// The trap engine's AArch64 execution plan (which path each class takes, and why refusals
// happen), its slots (the copy and the B back, decoded again by the decoder) and its
// simulation on the ptrace register block. Pure functions: these run on the build machine
// and, cross-compiled, inside the AArch64 VM (tests/arm64_vm).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "arch/arm64/probe_support/breakpoint.h"
#include "arch/arm64/probe_support/emulation.h"
#include "arch/arm64/probe_support/execution_plan.h"
#include "insn/arm64/arm64_insn.h"

namespace xprobe::arch::arm64 {
namespace {

using insn::arm64::decode;

constexpr uint64_t kCode = 0x400000;

// Words assembled by aarch64-linux-gnu-as (-march=armv8.8-a+mops), at kCode unless noted.
constexpr uint32_t kAdd = 0x8b020020;      // add x0, x1, x2
constexpr uint32_t kB = 0x14000010;        // b .+0x40
constexpr uint32_t kBl = 0x94000010;       // bl .+0x40
constexpr uint32_t kBne = 0x54000101;      // b.ne .+0x20
constexpr uint32_t kCbz = 0xb4000083;      // cbz x3, .+0x10
constexpr uint32_t kCbnzW = 0x35ffff83;    // cbnz w3, .-0x10
constexpr uint32_t kTbz = 0xb6400045;      // tbz x5, #40, .+0x8
constexpr uint32_t kTbnz = 0x37180045;     // tbnz w5, #3, .+0x8
constexpr uint32_t kAdr = 0x10000807;      // adr x7, .+0x100
constexpr uint32_t kAdrp = 0xb0000028;     // adrp x8, .+0x5000 (page offset 5)
constexpr uint32_t kLdrW = 0x18000109;     // ldr w9, .+0x20
constexpr uint32_t kLdrX = 0x58000109;     // ldr x9, .+0x20
constexpr uint32_t kLdrsw = 0x9800010a;    // ldrsw x10, .+0x20
constexpr uint32_t kPrfm = 0xd8000100;     // prfm pldl1keep, .+0x20
constexpr uint32_t kLdrQ = 0x9c000101;     // ldr q1, .+0x20
constexpr uint32_t kBr = 0xd61f0200;       // br x16
constexpr uint32_t kBlr = 0xd63f0220;      // blr x17
constexpr uint32_t kBlrX30 = 0xd63f03c0;   // blr x30
constexpr uint32_t kRet = 0xd65f03c0;      // ret
constexpr uint32_t kBraa = 0xd71f0a11;     // braa x16, x17
constexpr uint32_t kRetaa = 0xd65f0bff;    // retaa
constexpr uint32_t kBlraa = 0xd73f0a11;    // blraa x16, x17
constexpr uint32_t kLdxr = 0xc85f7c20;     // ldxr x0, [x1]
constexpr uint32_t kStxr = 0xc8027c20;     // stxr w2, x0, [x1]
constexpr uint32_t kSvc = 0xd4000001;      // svc #0
constexpr uint32_t kBrk = 0xd4200000;      // brk #0
constexpr uint32_t kCpyfp = 0x19010440;    // cpyfp [x0]!, [x1]!, x2!
constexpr uint32_t kBtiC = 0xd503245f;     // bti c
constexpr uint32_t kPaciasp = 0xd503233f;  // paciasp
constexpr uint32_t kAutiasp = 0xd50323bf;  // autiasp
constexpr uint32_t kMsrNzcv = 0xd51b4200;  // msr nzcv, x0
constexpr uint32_t kMrsTpidr = 0xd53bd040; // mrs x0, tpidr_el0
constexpr uint32_t kLdrSp = 0xf9400be0;    // ldr x0, [sp, #16]
constexpr uint32_t kStpPre = 0xa9bf7bfd;   // stp x29, x30, [sp, #-16]!
constexpr uint32_t kNop = 0xd503201f;      // nop

ExecutionPlan plan_of(uint32_t word) { return plan_execution(decode(word, kCode)); }

TEST(Arm64ExecutionPlan, EveryClassTakesTheDocumentedPath) {
  const std::map<uint32_t, ExecutionPath> expected = {
      {kAdd, ExecutionPath::OutOfLine},     {kLdrSp, ExecutionPath::OutOfLine},
      {kStpPre, ExecutionPath::OutOfLine},  {kNop, ExecutionPath::OutOfLine},
      {kBtiC, ExecutionPath::OutOfLine},    {kPaciasp, ExecutionPath::OutOfLine},
      {kAutiasp, ExecutionPath::OutOfLine}, {kMsrNzcv, ExecutionPath::OutOfLine},
      {kMrsTpidr, ExecutionPath::OutOfLine}, {kBraa, ExecutionPath::OutOfLine},
      {kRetaa, ExecutionPath::OutOfLine},
      {kB, ExecutionPath::Simulate},        {kBl, ExecutionPath::Simulate},
      {kBne, ExecutionPath::Simulate},      {kCbz, ExecutionPath::Simulate},
      {kCbnzW, ExecutionPath::Simulate},    {kTbz, ExecutionPath::Simulate},
      {kTbnz, ExecutionPath::Simulate},     {kAdr, ExecutionPath::Simulate},
      {kAdrp, ExecutionPath::Simulate},     {kLdrW, ExecutionPath::Simulate},
      {kLdrX, ExecutionPath::Simulate},     {kLdrsw, ExecutionPath::Simulate},
      {kPrfm, ExecutionPath::Simulate},     {kBr, ExecutionPath::Simulate},
      {kBlr, ExecutionPath::Simulate},      {kBlrX30, ExecutionPath::Simulate},
      {kRet, ExecutionPath::Simulate},
  };
  for (const auto& [word, path] : expected) {
    const ExecutionPlan plan = plan_of(word);
    EXPECT_EQ(plan.path, path) << std::hex << word << ": " << plan.reason;
    EXPECT_TRUE(plan.reason.empty()) << std::hex << word;
  }
}

TEST(Arm64ExecutionPlan, RefusalsSayWhy) {
  const std::map<uint32_t, std::string> expected = {
      {kLdxr, "load/store-exclusive"},
      {kStxr, "load/store-exclusive"},
      {kSvc, "SVC executed out of line"},
      {kBrk, "BRK is a breakpoint itself"},
      {kCpyfp, "FEAT_MOPS"},
      {kLdrQ, "SIMD&FP register"},
      {kBlraa, "pointer-authentication keys"},
      {0x00000000, "Unknown instruction: 00 00 00 00"},  // udf #0
  };
  for (const auto& [word, phrase] : expected) {
    const ExecutionPlan plan = plan_of(word);
    EXPECT_EQ(plan.path, ExecutionPath::Refused) << std::hex << word;
    EXPECT_NE(plan.reason.find(phrase), std::string::npos) << std::hex << word << ": " << plan.reason;
  }
}

// The slot's second word, decoded by xprobe's own decoder at the slot, must be a B to the
// instruction after the original.
void expect_slot_branches_back(uint32_t word, uint64_t code, uint64_t slot) {
  const auto built = build_slot(decode(word, code), slot);
  ASSERT_TRUE(built) << built.error().message;
  ASSERT_EQ(built->size(), kSlotSize);
  const auto copy = decode(std::span<const uint8_t>(*built).first(4), slot);
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->word, word);
  const auto back = decode(std::span<const uint8_t>(*built).subspan(4, 4), slot + 4);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cls, insn::arm64::InsnClass::B);
  EXPECT_EQ(back->target, code + 4) << std::hex << "slot " << slot << " code " << code;
}

TEST(Arm64Slot, CopyThenBranchBackFromBelowAndAbove) {
  for (uint32_t word : {kAdd, kLdrSp, kStpPre, kPaciasp, kAutiasp, kBtiC, kBraa, kRetaa}) {
    expect_slot_branches_back(word, kCode, kCode - 0x10000);
    expect_slot_branches_back(word, kCode, kCode + 0x7f00000);
  }
}

TEST(Arm64Slot, EdgesOfTheBranchReach) {
  // The B back sits at slot + 4 and targets code + 4: its reach is [-128 MiB, +128 MiB - 4].
  constexpr uint64_t kMiB = 1 << 20;
  const uint64_t code = 0x10000000;
  expect_slot_branches_back(kAdd, code, code + 128 * kMiB);      // back by exactly -128 MiB
  expect_slot_branches_back(kAdd, code, code - 128 * kMiB + 4);  // forward by 128 MiB - 4
  const auto too_far_up = build_slot(decode(kAdd, code), code + 128 * kMiB + 4);
  ASSERT_FALSE(too_far_up);
  EXPECT_NE(too_far_up.error().message.find("out of B's reach"), std::string::npos);
  EXPECT_FALSE(build_slot(decode(kAdd, code), code - 128 * kMiB));
  EXPECT_FALSE(build_slot(decode(kAdd, code), code - 0x1002));  // a misaligned slot
  EXPECT_LE(kSlotReach + (1 << 16), 128 * kMiB);  // a 64 KiB slot area within reach is within B's reach
}

TEST(Arm64Slot, SimulatedAndRefusedInstructionsGetNoSlot) {
  for (uint32_t word : {kB, kBl, kAdr, kLdrX, kRet, kLdxr, kSvc}) {
    EXPECT_FALSE(build_slot(decode(word, kCode), kCode - 0x1000)) << std::hex << word;
  }
}

TEST(Arm64Breakpoint, IsBrkZeroAndStopsAtItself) {
  const auto insn = decode(std::span<const uint8_t>(kBreakpointBytes), kCode);
  ASSERT_TRUE(insn);
  EXPECT_EQ(insn->word, kBreakpointWord);
  EXPECT_EQ(insn->never, insn::arm64::NeverReason::Breakpoint);
}

class BufferMemory final : public sim::arm64::MemoryReader {
 public:
  std::map<uint64_t, uint8_t> bytes;
  void put64(uint64_t address, uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  bool read(uint64_t address, void* buffer, size_t length) override {
    for (size_t i = 0; i < length; ++i) {
      auto it = bytes.find(address + i);
      if (it == bytes.end()) return false;
      static_cast<uint8_t*>(buffer)[i] = it->second;
    }
    return true;
  }
};

UserPtRegs stopped_at(uint64_t pc) {
  UserPtRegs regs;
  for (size_t i = 0; i < regs.regs.size(); ++i) regs.regs[i] = 0x1000 + i;
  regs.sp = 0x7fff0000;
  regs.pc = pc;
  regs.pstate = 0x60001000;  // Z and C set, SSBS (bit 12), EL0t
  return regs;
}

TEST(Arm64Emulation, BranchWithLinkLinksTheOriginalAddress) {
  BufferMemory memory;
  const auto next = emulate(decode(kBl, kCode), stopped_at(kCode), memory);
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->pc, kCode + 0x40);
  EXPECT_EQ(next->regs[30], kCode + 4);
  EXPECT_EQ(next->regs[29], 0x1000u + 29);
  EXPECT_EQ(next->sp, 0x7fff0000u);
}

TEST(Arm64Emulation, ConditionsComeFromPstate) {
  BufferMemory memory;
  UserPtRegs regs = stopped_at(kCode);
  auto taken = emulate(decode(kBne, kCode), regs, memory);  // Z set: not taken
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->pc, kCode + 4);
  regs.pstate &= ~uint64_t{0x40000000};  // Z clear: taken
  taken = emulate(decode(kBne, kCode), regs, memory);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->pc, kCode + 0x20);
  regs.regs[3] = 0;
  auto cbz = emulate(decode(kCbz, kCode), regs, memory);
  ASSERT_TRUE(cbz);
  EXPECT_EQ(cbz->pc, kCode + 0x10);
  regs.regs[3] = uint64_t{1} << 32;  // cbnz w3 tests the low 32 bits only: zero, not taken
  auto cbnz = emulate(decode(kCbnzW, kCode), regs, memory);
  ASSERT_TRUE(cbnz);
  EXPECT_EQ(cbnz->pc, kCode + 4);
  regs.regs[5] = uint64_t{1} << 40;
  auto tbz = emulate(decode(kTbz, kCode), regs, memory);
  ASSERT_TRUE(tbz);
  EXPECT_EQ(tbz->pc, kCode + 4);
}

TEST(Arm64Emulation, PcRelativeDataAndLiterals) {
  BufferMemory memory;
  const UserPtRegs regs = stopped_at(kCode + 0x24);
  auto adr = emulate(decode(kAdr, kCode + 0x24), regs, memory);
  ASSERT_TRUE(adr);
  EXPECT_EQ(adr->regs[7], kCode + 0x124);
  EXPECT_EQ(adr->pc, kCode + 0x28);
  auto adrp = emulate(decode(kAdrp, kCode + 0x24), regs, memory);
  ASSERT_TRUE(adrp);
  EXPECT_EQ(adrp->regs[8], kCode + 0x5000);
  memory.put64(kCode + 0x44, 0x80000000'fffffff0);
  auto ldr_w = emulate(decode(kLdrW, kCode + 0x24), regs, memory);
  ASSERT_TRUE(ldr_w);
  EXPECT_EQ(ldr_w->regs[9], 0xfffffff0u);  // zero-extended
  auto ldr_x = emulate(decode(kLdrX, kCode + 0x24), regs, memory);
  ASSERT_TRUE(ldr_x);
  EXPECT_EQ(ldr_x->regs[9], 0x80000000'fffffff0u);
  auto ldrsw = emulate(decode(kLdrsw, kCode + 0x24), regs, memory);
  ASSERT_TRUE(ldrsw);
  EXPECT_EQ(ldrsw->regs[10], 0xffffffff'fffffff0u);  // sign-extended
  auto prfm = emulate(decode(kPrfm, kCode + 0x24), regs, memory);
  ASSERT_TRUE(prfm);
  EXPECT_EQ(prfm->regs, regs.regs);
  EXPECT_EQ(prfm->pc, kCode + 0x28);
}

TEST(Arm64Emulation, UnreadableLiteralLeavesTheOriginalToFault) {
  BufferMemory memory;  // nothing mapped
  const auto next = emulate(decode(kLdrX, kCode), stopped_at(kCode), memory);
  ASSERT_FALSE(next);
  EXPECT_NE(next.error().message.find("cannot read"), std::string::npos);
}

TEST(Arm64Emulation, RegisterBranches) {
  BufferMemory memory;
  UserPtRegs regs = stopped_at(kCode);
  regs.regs[16] = 0x500000;
  regs.regs[17] = 0x600000;
  auto br = emulate(decode(kBr, kCode), regs, memory);
  ASSERT_TRUE(br);
  EXPECT_EQ(br->pc, 0x500000u);
  EXPECT_EQ(br->regs[30], regs.regs[30]);
  auto blr = emulate(decode(kBlr, kCode), regs, memory);
  ASSERT_TRUE(blr);
  EXPECT_EQ(blr->pc, 0x600000u);
  EXPECT_EQ(blr->regs[30], kCode + 4);
  auto blr_x30 = emulate(decode(kBlrX30, kCode), regs, memory);  // the target is read before x30 is written
  ASSERT_TRUE(blr_x30);
  EXPECT_EQ(blr_x30->pc, regs.regs[30]);
  EXPECT_EQ(blr_x30->regs[30], kCode + 4);
  auto ret = emulate(decode(kRet, kCode), regs, memory);
  ASSERT_TRUE(ret);
  EXPECT_EQ(ret->pc, regs.regs[30]);
}

TEST(Arm64Emulation, PstateKeepsItsFieldsAndLosesBtype) {
  BufferMemory memory;
  UserPtRegs regs = stopped_at(kCode);
  regs.pstate |= 0x800;  // BTYPE = 10: reached by BLR (the instruction at a landing pad)
  const auto next = emulate(decode(kB, kCode), regs, memory);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->pstate, 0x60001000u);  // NZCV and SSBS kept, BTYPE cleared
}

TEST(Arm64Emulation, RefusesWhatIsNotSimulated) {
  BufferMemory memory;
  EXPECT_FALSE(emulate(decode(kAdd, kCode), stopped_at(kCode), memory));
  EXPECT_FALSE(emulate(decode(kSvc, kCode), stopped_at(kCode), memory));
}

}  // namespace
}  // namespace xprobe::arch::arm64
