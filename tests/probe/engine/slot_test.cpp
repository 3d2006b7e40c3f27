// Out-of-line slots and the execute/emulate/refuse table; expected bytes computed by hand.
#include <gtest/gtest.h>

#include <cstring>

#include "arch/x86/probe_support/sim_registers.h"
#include "arch/x86/probe_support/execution_plan.h"

namespace xprobe::arch::x86 {
namespace {

using insn::x86::FlowKind;
using insn::x86::X86Insn;

X86Insn rip_load() {
  // mov eax, [rip + 0x2000]: 8b 05 00 20 00 00
  X86Insn insn;
  insn.address = 0x400000;
  insn.length = 6;
  insn.opcode = 0x8b;
  insn.has_modrm = true;
  insn.modrm = 0x05;
  insn.modrm_offset = 1;
  insn.rip_relative = true;
  insn.disp_offset = 2;
  insn.disp_size = 4;
  insn.disp = 0x2000;
  return insn;
}

TEST(SlotTest, RipRelativeDisplacementIsRewrittenToAddressTheSameByte) {
  const uint8_t bytes[] = {0x8b, 0x05, 0x00, 0x20, 0x00, 0x00};
  auto slot = build_slot(bytes, rip_load(), 0x400000, 0x500000);
  ASSERT_TRUE(slot) << slot.error().message;
  // disp' = 0x2000 + (0x400000 - 0x500000) = -0xfe000 = 0xfff02000;
  // jmp back: 0x400006 - (0x500000 + 6 + 5) = -0x100005 = 0xffeffffb.
  const std::vector<uint8_t> expected = {0x8b, 0x05, 0x00, 0x20, 0xf0, 0xff, 0xe9, 0xfb, 0xff, 0xef, 0xff};
  EXPECT_EQ(*slot, expected);
}

TEST(SlotTest, PlainInstructionIsCopiedAndFollowedByAJumpBack) {
  const uint8_t bytes[] = {0x48, 0x89, 0xe5};  // mov rbp, rsp
  X86Insn insn;
  insn.address = 0x401000;
  insn.length = 3;
  auto slot = build_slot(bytes, insn, 0x401000, 0x400000);
  ASSERT_TRUE(slot);
  // 0x401003 - (0x400000 + 3 + 5) = 0xffb
  const std::vector<uint8_t> expected = {0x48, 0x89, 0xe5, 0xe9, 0xfb, 0x0f, 0x00, 0x00};
  EXPECT_EQ(*slot, expected);
}

TEST(SlotTest, OutOfReachIsAnError) {
  const uint8_t bytes[] = {0x8b, 0x05, 0x00, 0x20, 0x00, 0x00};
  auto far_slot = build_slot(bytes, rip_load(), 0x400000, 0x400000 + (uint64_t{3} << 30));
  ASSERT_FALSE(far_slot);
  EXPECT_NE(far_slot.error().message.find("out of reach"), std::string::npos) << far_slot.error().message;
}

TEST(SlotTest, ThreadsInsideASlotMapBackToTheOriginalCode) {
  EXPECT_EQ(original_address_for_slot_ip(0x500000, 0x500000, 0x400000, 6), 0x400000u);
  EXPECT_EQ(original_address_for_slot_ip(0x500006, 0x500000, 0x400000, 6), 0x400006u);
  EXPECT_EQ(original_address_for_slot_ip(0x500003, 0x500000, 0x400000, 6), 0u);
}

TEST(ExecutionPlanTest, EachInstructionClassTakesItsDocumentedPath) {
  auto path_of = [](X86Insn insn) { return plan_execution(insn).path; };
  X86Insn plain;
  plain.length = 3;
  EXPECT_EQ(path_of(plain), ExecutionPath::OutOfLine);
  EXPECT_EQ(path_of(rip_load()), ExecutionPath::OutOfLine);
  X86Insn branch;
  branch.length = 2;
  branch.has_rel_target = true;
  for (FlowKind flow : {FlowKind::Jmp, FlowKind::Jcc, FlowKind::Call, FlowKind::Loop}) {
    branch.flow = flow;
    branch.opcode = flow == FlowKind::Loop ? 0xe2 : 0xeb;
    EXPECT_EQ(path_of(branch), ExecutionPath::Emulate) << static_cast<int>(flow);
  }
  X86Insn call_indirect;
  call_indirect.length = 2;
  call_indirect.flow = FlowKind::IndirectCall;
  call_indirect.opcode = 0xff;
  call_indirect.has_modrm = true;
  call_indirect.modrm = 0xd0;
  EXPECT_EQ(path_of(call_indirect), ExecutionPath::Emulate);
  X86Insn jump_indirect = call_indirect;
  jump_indirect.flow = FlowKind::IndirectJmp;
  jump_indirect.modrm = 0xe0;
  EXPECT_EQ(path_of(jump_indirect), ExecutionPath::OutOfLine);
  X86Insn ret;
  ret.length = 1;
  ret.flow = FlowKind::Ret;
  EXPECT_EQ(path_of(ret), ExecutionPath::OutOfLine);
  X86Insn syscall;
  syscall.length = 2;
  syscall.flow = FlowKind::Syscall;
  EXPECT_EQ(path_of(syscall), ExecutionPath::OutOfLine);
  for (FlowKind flow : {FlowKind::Interrupt, FlowKind::Ud, FlowKind::Iret, FlowKind::FarTransfer}) {
    X86Insn refused;
    refused.length = 1;
    refused.flow = flow;
    EXPECT_EQ(path_of(refused), ExecutionPath::Refused) << static_cast<int>(flow);
    EXPECT_FALSE(plan_execution(refused).reason.empty());
  }
  X86Insn xbegin;
  xbegin.length = 6;
  xbegin.has_rel_target = true;
  EXPECT_EQ(path_of(xbegin), ExecutionPath::Refused);
}

TEST(AbiTest, SystemVArgumentsThenTheStack) {
  EXPECT_FALSE(argument_location(0));
  EXPECT_EQ(argument_location(1)->reg, sim::x86::kRdi);
  EXPECT_EQ(argument_location(2)->reg, sim::x86::kRsi);
  EXPECT_EQ(argument_location(3)->reg, sim::x86::kRdx);
  EXPECT_EQ(argument_location(4)->reg, sim::x86::kRcx);
  EXPECT_EQ(argument_location(5)->reg, sim::x86::kR8);
  EXPECT_EQ(argument_location(6)->reg, sim::x86::kR9);
  EXPECT_FALSE(argument_location(7)->in_register);
  EXPECT_EQ(argument_location(7)->stack_offset, 8u);
  EXPECT_EQ(argument_location(9)->stack_offset, 24u);
}

TEST(AbiTest, RegisterConversionRoundTrips) {
  user_regs_struct raw{};
  raw.rax = 1; raw.rcx = 2; raw.rdx = 3; raw.rbx = 4; raw.rsp = 5; raw.rbp = 6; raw.rsi = 7; raw.rdi = 8;
  raw.r8 = 9; raw.r15 = 16; raw.rip = 0x1234; raw.eflags = 0x246; raw.fs_base = 0x7000;
  auto regs = to_sim(raw);
  EXPECT_EQ(regs.gpr[sim::x86::kRsp], 5u);
  EXPECT_EQ(regs.gpr[sim::x86::kRdi], 8u);
  EXPECT_EQ(regs.gpr[sim::x86::kR15], 16u);
  EXPECT_EQ(regs.fs_base, 0x7000u);
  regs.gpr[sim::x86::kRsp] = 0x99;
  regs.rip = 0x5678;
  user_regs_struct back = raw;
  from_sim(regs, back);
  EXPECT_EQ(back.rsp, 0x99u);
  EXPECT_EQ(back.rip, 0x5678u);
  EXPECT_EQ(back.rdi, 8u);
  EXPECT_EQ(back.eflags, 0x246u);
}

}  // namespace
}  // namespace xprobe::arch::x86
