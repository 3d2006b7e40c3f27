// The x86 branch simulator on hand-built instructions; every expected value is computed by
// hand from the Intel SDM's description of the instruction.
#include "sim/x86/branch_sim.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

namespace xprobe::sim::x86 {
namespace {

using insn::x86::FlowKind;
using insn::x86::OpcodeMap;
using insn::x86::X86Insn;

class FakeMemory final : public SimMemory {
 public:
  uint64_t writable_low = 0x6000, writable_high = 0x8000;
  std::map<uint64_t, uint8_t> bytes;
  void put64(uint64_t address, uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  uint64_t get64(uint64_t address) {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= uint64_t{bytes[address + i]} << (8 * i);
    return value;
  }
  Status read(uint64_t address, std::span<uint8_t> out) override {
    for (size_t i = 0; i < out.size(); ++i) {
      auto it = bytes.find(address + i);
      if (it == bytes.end()) return make_error("unmapped");
      out[i] = it->second;
    }
    return {};
  }
  Status write(uint64_t address, std::span<const uint8_t> in) override {
    if (address < writable_low || address + in.size() > writable_high) return make_error("read-only");
    for (size_t i = 0; i < in.size(); ++i) bytes[address + i] = in[i];
    return {};
  }
};

X86Insn relative(FlowKind flow, uint8_t opcode, uint64_t address, uint8_t length, uint64_t target,
                 OpcodeMap map = OpcodeMap::Primary) {
  X86Insn insn;
  insn.address = address;
  insn.length = length;
  insn.flow = flow;
  insn.opcode = opcode;
  insn.map = map;
  insn.has_rel_target = true;
  insn.rel_target = target;
  return insn;
}

X86Insn indirect(FlowKind flow, uint8_t modrm, uint8_t length, uint8_t rex = 0) {
  X86Insn insn;
  insn.address = 0x1000;
  insn.length = length;
  insn.flow = flow;
  insn.opcode = 0xff;
  insn.has_modrm = true;
  insn.modrm = modrm;
  insn.rex = rex;
  return insn;
}

TEST(BranchSimTest, RelativeJumpGoesToItsTargetFromTheOriginalPc) {
  FakeMemory memory;
  X86Regs regs;
  auto jmp = relative(FlowKind::Jmp, 0xe9, 0x401000, 5, 0x402000);
  auto out = emulate(jmp, 0x401000, regs, memory);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->rip, 0x402000u);
  // Decoded at one address, run at another (a copy of the same code mapped elsewhere).
  out = emulate(jmp, 0x501000, regs, memory);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->rip, 0x502000u);
}

TEST(BranchSimTest, ConditionalJumpsReadTheFlags) {
  FakeMemory memory;
  X86Regs regs;
  auto je = relative(FlowKind::Jcc, 0x74, 0x1000, 2, 0x1010);
  regs.rflags = flag::kZero;
  EXPECT_EQ(emulate(je, 0x1000, regs, memory)->rip, 0x1010u);
  regs.rflags = 0;
  EXPECT_EQ(emulate(je, 0x1000, regs, memory)->rip, 0x1002u);
  // jl (0f 8c): taken when SF != OF.
  auto jl = relative(FlowKind::Jcc, 0x8c, 0x1000, 6, 0x0f00, OpcodeMap::Map0F);
  regs.rflags = flag::kSign;
  EXPECT_EQ(emulate(jl, 0x1000, regs, memory)->rip, 0x0f00u);
  regs.rflags = flag::kSign | flag::kOverflow;
  EXPECT_EQ(emulate(jl, 0x1000, regs, memory)->rip, 0x1006u);
  // jbe: CF or ZF. ja: neither.
  auto jbe = relative(FlowKind::Jcc, 0x76, 0x1000, 2, 0x1040);
  regs.rflags = flag::kCarry;
  EXPECT_EQ(emulate(jbe, 0x1000, regs, memory)->rip, 0x1040u);
  regs.rflags = 0;
  EXPECT_EQ(emulate(jbe, 0x1000, regs, memory)->rip, 0x1002u);
  // jg: ZF = 0 and SF = OF.
  auto jg = relative(FlowKind::Jcc, 0x7f, 0x1000, 2, 0x1040);
  regs.rflags = flag::kSign | flag::kOverflow;
  EXPECT_EQ(emulate(jg, 0x1000, regs, memory)->rip, 0x1040u);
  regs.rflags = flag::kSign | flag::kOverflow | flag::kZero;
  EXPECT_EQ(emulate(jg, 0x1000, regs, memory)->rip, 0x1002u);
  // jp / jnp
  EXPECT_TRUE(condition_holds(0xa, flag::kParity));
  EXPECT_FALSE(condition_holds(0xb, flag::kParity));
  EXPECT_TRUE(condition_holds(0x0, flag::kOverflow));
  EXPECT_TRUE(condition_holds(0x9, 0));
}

TEST(BranchSimTest, CallPushesTheOriginalNextAddress) {
  FakeMemory memory;
  X86Regs regs;
  regs.gpr[kRsp] = 0x7000;
  auto call = relative(FlowKind::Call, 0xe8, 0x401000, 5, 0x402000);
  auto out = emulate(call, 0x401000, regs, memory);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->rip, 0x402000u);
  EXPECT_EQ(out->gpr[kRsp], 0x6ff8u);
  EXPECT_EQ(memory.get64(0x6ff8), 0x401005u);
  // A stack that cannot be written is an error, registers untouched.
  regs.gpr[kRsp] = 0x9000;
  EXPECT_FALSE(emulate(call, 0x401000, regs, memory));
}

TEST(BranchSimTest, RetPopsAndRetImmediateReleasesArguments) {
  FakeMemory memory;
  X86Regs regs;
  regs.gpr[kRsp] = 0x6ff8;
  memory.put64(0x6ff8, 0x401005);
  X86Insn ret;
  ret.length = 1;
  ret.flow = FlowKind::Ret;
  ret.opcode = 0xc3;
  auto out = emulate(ret, 0x402010, regs, memory);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->rip, 0x401005u);
  EXPECT_EQ(out->gpr[kRsp], 0x7000u);
  ret.opcode = 0xc2;
  ret.length = 3;
  ret.imm = 0x10;
  out = emulate(ret, 0x402010, regs, memory);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->gpr[kRsp], 0x7010u);
  regs.gpr[kRsp] = 0x100;  // unreadable stack
  EXPECT_FALSE(emulate(ret, 0x402010, regs, memory));
}

TEST(BranchSimTest, LoopFamilyCountsRcx) {
  FakeMemory memory;
  X86Regs regs;
  auto loop = relative(FlowKind::Loop, 0xe2, 0x1000, 2, 0x0ff0);
  regs.gpr[kRcx] = 5;
  auto out = emulate(loop, 0x1000, regs, memory);
  EXPECT_EQ(out->gpr[kRcx], 4u);
  EXPECT_EQ(out->rip, 0x0ff0u);
  regs.gpr[kRcx] = 1;
  out = emulate(loop, 0x1000, regs, memory);
  EXPECT_EQ(out->gpr[kRcx], 0u);
  EXPECT_EQ(out->rip, 0x1002u);
  auto loopne = relative(FlowKind::Loop, 0xe0, 0x1000, 2, 0x0ff0);
  regs.gpr[kRcx] = 5;
  regs.rflags = flag::kZero;
  EXPECT_EQ(emulate(loopne, 0x1000, regs, memory)->rip, 0x1002u);
  auto loope = relative(FlowKind::Loop, 0xe1, 0x1000, 2, 0x0ff0);
  EXPECT_EQ(emulate(loope, 0x1000, regs, memory)->rip, 0x0ff0u);
  auto jrcxz = relative(FlowKind::Loop, 0xe3, 0x1000, 2, 0x1080);
  regs.gpr[kRcx] = 0;
  out = emulate(jrcxz, 0x1000, regs, memory);
  EXPECT_EQ(out->rip, 0x1080u);
  EXPECT_EQ(out->gpr[kRcx], 0u);
  // jecxz looks at ecx only.
  jrcxz.prefixes.address_size = true;
  regs.gpr[kRcx] = 0x100000000;
  EXPECT_EQ(emulate(jrcxz, 0x1000, regs, memory)->rip, 0x1080u);
  // 67-prefixed loop (ecx count) is not emulated.
  loop.prefixes.address_size = true;
  EXPECT_FALSE(can_emulate(loop));
}

TEST(BranchSimTest, IndirectCallsAndJumpsThroughRegistersAndMemory) {
  FakeMemory memory;
  X86Regs regs;
  regs.gpr[kRsp] = 0x7000;
  regs.gpr[kRax] = 0x555000;
  // call rax: ff d0
  auto out = emulate(indirect(FlowKind::IndirectCall, 0xd0, 2), 0x1000, regs, memory);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->rip, 0x555000u);
  EXPECT_EQ(memory.get64(0x6ff8), 0x1002u);
  // call r11: 41 ff d3
  regs.gpr[kR11] = 0x777000;
  out = emulate(indirect(FlowKind::IndirectCall, 0xd3, 3, 0x41), 0x1000, regs, memory);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->rip, 0x777000u);
  EXPECT_EQ(memory.get64(0x6ff8), 0x1003u);
  // call [rip + 0x100]: ff 15 00 01 00 00 -> reads 0x1006 + 0x100
  auto rip_call = indirect(FlowKind::IndirectCall, 0x15, 6);
  rip_call.rip_relative = true;
  rip_call.disp = 0x100;
  rip_call.disp_size = 4;
  memory.put64(0x1106, 0x888000);
  out = emulate(rip_call, 0x1000, regs, memory);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->rip, 0x888000u);
  EXPECT_EQ(memory.get64(0x6ff8), 0x1006u);
  EXPECT_EQ(out->gpr[kRsp], 0x6ff8u);
  // jmp [rbx + rcx*8 + 0x10]: ff 64 cb 10
  auto table_jump = indirect(FlowKind::IndirectJmp, 0x64, 4);
  table_jump.has_sib = true;
  table_jump.sib = 0xcb;
  table_jump.disp = 0x10;
  table_jump.disp_size = 1;
  regs.gpr[kRbx] = 0x3000;
  regs.gpr[kRcx] = 2;
  memory.put64(0x3000 + 16 + 0x10, 0x999000);
  out = emulate(table_jump, 0x1000, regs, memory);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->rip, 0x999000u);
  EXPECT_EQ(out->gpr[kRsp], 0x7000u);  // a jump pushes nothing
  // jmp fs:[0x28] (64 ff 24 25 28 00 00 00): SIB with no base and no index.
  auto fs_jump = indirect(FlowKind::IndirectJmp, 0x24, 8);
  fs_jump.has_sib = true;
  fs_jump.sib = 0x25;
  fs_jump.disp = 0x28;
  fs_jump.disp_size = 4;
  fs_jump.prefixes.segment = 0x64;
  regs.fs_base = 0x4000;
  memory.put64(0x4028, 0xaaa000);
  out = emulate(fs_jump, 0x1000, regs, memory);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->rip, 0xaaa000u);
  // An unreadable operand is an error.
  regs.gpr[kRbx] = 0x10;
  EXPECT_FALSE(emulate(table_jump, 0x1000, regs, memory));
}

TEST(BranchSimTest, RefusesWhatItDoesNotModel) {
  FakeMemory memory;
  X86Regs regs;
  X86Insn plain;
  plain.length = 3;
  EXPECT_FALSE(can_emulate(plain));
  EXPECT_FALSE(emulate(plain, 0x1000, regs, memory));
  auto call16 = relative(FlowKind::Call, 0xe8, 0x1000, 4, 0x2000);
  call16.prefixes.operand_size = true;
  EXPECT_FALSE(can_emulate(call16));
  // 32-bit code with an operand-size prefix branches to a 16-bit ip: not modelled.
  auto jmp16 = relative(FlowKind::Jmp, 0xe9, 0x1000, 4, 0x2000);
  jmp16.mode = insn::x86::Mode::Protected32;
  jmp16.prefixes.operand_size = true;
  EXPECT_FALSE(can_emulate(jmp16));
}

TEST(BranchSimTest, ThirtyTwoBitCallPushesFourBytesAndWrapsAtFourGiB) {
  FakeMemory memory;
  X86Regs regs;
  regs.gpr[kRsp] = 0x7000;
  memory.put64(0x6ff8, 0x1111111111111111);
  // call at 0xfffffff0 whose target wrapped past 4 GiB (the decoder truncates to 32 bits).
  auto call32 = relative(FlowKind::Call, 0xe8, 0xfffffff0, 5, 0x10);
  call32.mode = insn::x86::Mode::Protected32;
  ASSERT_TRUE(can_emulate(call32));
  auto next = emulate(call32, 0xfffffff0, regs, memory);
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->rip, 0x10u);
  EXPECT_EQ(next->gpr[kRsp], 0x6ffcu);
  // Four bytes pushed, the next address 0xfffffff5; the word below is untouched.
  EXPECT_EQ(memory.get64(0x6ff8), 0xfffffff511111111u);
}

}  // namespace
}  // namespace xprobe::sim::x86
