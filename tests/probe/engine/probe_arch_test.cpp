// The trap engine's architecture interface (arch/probe_arch.h) for x86-64 and i386 code:
// planning, slot code, emulation through the memory interface, the ABI facts the engine
// uses. Expected bytes and register values are computed by hand from the Intel SDM.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <string>

#include "arch/registry.h"
#include "arch/x86/probe_support/sim_registers.h"
#include "arch/x86/probe_support/x86_probe_arch.h"
#include "probe/arch_registers.h"
#include "sim/x86/branch_sim.h"

namespace xprobe::arch {
namespace {

// Byte-addressed memory; reading a byte never written is an error (an unmapped page).
class FakeMemory final : public ProbeMemory {
 public:
  Status read(uint64_t address, std::span<uint8_t> bytes) override {
    for (size_t i = 0; i < bytes.size(); ++i) {
      auto it = bytes_.find(address + i);
      if (it == bytes_.end()) return make_error("unmapped");
      bytes[i] = it->second;
    }
    return {};
  }
  Status write(uint64_t address, std::span<const uint8_t> bytes) override {
    for (size_t i = 0; i < bytes.size(); ++i) bytes_[address + i] = bytes[i];
    return {};
  }
  void put_u64(uint64_t address, uint64_t value) { put(address, &value, 8); }
  void put_u32(uint64_t address, uint32_t value) { put(address, &value, 4); }
  uint64_t u64(uint64_t address) { return get(address, 8); }
  uint64_t u32(uint64_t address) { return get(address, 4); }
  bool has(uint64_t address) const { return bytes_.count(address) != 0; }

 private:
  void put(uint64_t address, const void* value, size_t size) {
    const auto* p = static_cast<const uint8_t*>(value);
    for (size_t i = 0; i < size; ++i) bytes_[address + i] = p[i];
  }
  uint64_t get(uint64_t address, size_t size) {
    uint64_t value = 0;
    uint8_t buffer[8] = {};
    if (!read(address, std::span<uint8_t>(buffer, size))) return ~uint64_t{0};
    std::memcpy(&value, buffer, size);
    return value;
  }
  std::map<uint64_t, uint8_t> bytes_;
};

const ProbeArch& arch_for(insn::Arch arch) {
  auto chosen = probe_arch(arch);
  EXPECT_TRUE(chosen) << chosen.error().message;
  return **chosen;
}

std::unique_ptr<ProbedInstruction> plan(insn::Arch arch, std::vector<uint8_t> code, uint64_t address) {
  auto planned = arch_for(arch).plan(code, address);
  EXPECT_TRUE(planned) << planned.error().message;
  return planned ? std::move(*planned) : nullptr;
}

std::string refusal(insn::Arch arch, std::vector<uint8_t> code, uint64_t address) {
  auto planned = arch_for(arch).plan(code, address);
  return planned ? std::string("(accepted)") : planned.error().message;
}

TEST(ProbeArchTest, BothX86ModesBreakWithHltAndReadFifteenBytes) {
  for (insn::Arch arch : {insn::Arch::X86_64, insn::Arch::I386}) {
    const ProbeArch& probe = arch_for(arch);
    EXPECT_EQ(probe.arch(), arch);
    ASSERT_EQ(probe.breakpoint().size(), 1u);
    EXPECT_EQ(probe.breakpoint()[0], 0xf4);  // hlt: a fault, the stop's rip on it
    EXPECT_EQ(probe.longest_instruction(), 15u);
  }
}

TEST(ProbeArchTest, AArch64IsNotHandledYetAndSaysSo) {
  auto chosen = probe_arch(insn::Arch::AArch64);
  ASSERT_FALSE(chosen);
  EXPECT_NE(chosen.error().message.find("aarch64"), std::string::npos) << chosen.error().message;
}

TEST(ProbeArchTest, TheCodeSegmentTellsI386ThreadsFromX86_64Ones) {
  RegisterBlock registers{};
  registers.cs = 0x33;
  EXPECT_EQ(thread_arch(registers), insn::Arch::X86_64);
  registers.cs = 0x23;
  EXPECT_EQ(thread_arch(registers), insn::Arch::I386);
}

TEST(ProbeArchTest, X86_64RipRelativeLoadRunsOutOfLineWithItsDisplacementFixed) {
  // mov eax, [rip + 0x2000] at 0x400000; slot at 0x500000 (as SlotTest, through the interface).
  auto insn = plan(insn::Arch::X86_64, {0x8b, 0x05, 0x00, 0x20, 0x00, 0x00, 0x90, 0x90}, 0x400000);
  ASSERT_TRUE(insn);
  EXPECT_EQ(insn->path(), StepPath::OutOfLine);
  EXPECT_EQ(insn->length(), 6u);
  EXPECT_FALSE(insn->is_call());
  auto code = insn->slot_code(0x500000);
  ASSERT_TRUE(code) << code.error().message;
  const std::vector<uint8_t> expected = {0x8b, 0x05, 0x00, 0x20, 0xf0, 0xff, 0xe9, 0xfb, 0xff, 0xef, 0xff};
  EXPECT_EQ(*code, expected);
  EXPECT_EQ(insn->original_address_for_slot_ip(0x500000, 0x500000), 0x400000u);
  EXPECT_EQ(insn->original_address_for_slot_ip(0x500006, 0x500000), 0x400006u);
  EXPECT_EQ(insn->original_address_for_slot_ip(0x500003, 0x500000), 0u);
  ASSERT_EQ(insn->bytes_under_breakpoint(1).size(), 1u);
  EXPECT_EQ(insn->bytes_under_breakpoint(1)[0], 0x8b);
}

TEST(ProbeArchTest, X86_64CallIsEmulatedPushingTheOriginalReturnAddress) {
  // call rel32 +0x100 at 0x401000: target 0x401105, pushes 0x401005.
  auto insn = plan(insn::Arch::X86_64, {0xe8, 0x00, 0x01, 0x00, 0x00}, 0x401000);
  ASSERT_TRUE(insn);
  EXPECT_EQ(insn->path(), StepPath::Emulate);
  EXPECT_TRUE(insn->is_call());
  RegisterBlock registers{};
  registers.rip = 0x401000;
  registers.rsp = 0x7ffd0000;
  FakeMemory memory;
  ASSERT_TRUE(insn->emulate(registers, memory));
  EXPECT_EQ(registers.rip, 0x401105u);
  EXPECT_EQ(registers.rsp, 0x7ffcfff8u);
  EXPECT_EQ(memory.u64(0x7ffcfff8), 0x401005u);
}

TEST(ProbeArchTest, RefusalsCarryTheReasonAUserReads) {
  EXPECT_NE(refusal(insn::Arch::X86_64, {0xcc}, 0x1000).find("interrupt"), std::string::npos);
  EXPECT_NE(refusal(insn::Arch::I386, {0xcd, 0x80}, 0x1000).find("interrupt"), std::string::npos);
  // sysenter: returns through the vDSO, never after a copy.
  EXPECT_NE(refusal(insn::Arch::I386, {0x0f, 0x34}, 0x1000).find("sysenter"), std::string::npos);
  // 0f 0b is ud2; 0f ff is ud0 without its ModRM at the end of the buffer.
  EXPECT_NE(refusal(insn::Arch::X86_64, {0x0f, 0x0b}, 0x1000).find("undefined"), std::string::npos);
  EXPECT_EQ(refusal(insn::Arch::X86_64, {0x0f}, 0x1000), "Unknown instruction: 0f");
}

TEST(ProbeArchTest, X86_64ReturnAddressIsTheEightBytesAtRsp) {
  const ProbeArch& probe = arch_for(insn::Arch::X86_64);
  FakeMemory memory;
  memory.put_u64(0x7ffd0000, 0x5555'1234'5678);
  RegisterBlock registers{};
  registers.rsp = 0x7ffd0000;
  registers.rax = 42;
  auto address = probe.return_address_at_entry(registers, memory);
  ASSERT_TRUE(address) << address.error().message;
  EXPECT_EQ(*address, 0x5555'1234'5678u);
  EXPECT_EQ(probe.stack_pointer(registers), 0x7ffd0000u);
  EXPECT_EQ(probe.return_value(registers), 42u);
  EXPECT_EQ(probe.longest_return_pop(), 8u + 0xffff);
  registers.rsp = 0x1000;  // unmapped
  EXPECT_FALSE(probe.return_address_at_entry(registers, memory));
}

TEST(ProbeArchTest, I386DecodesIn32BitMode) {
  // 48 is `dec eax` in 32-bit mode (a REX prefix in 64-bit mode): one byte long.
  auto insn = plan(insn::Arch::I386, {0x48, 0x89, 0xe5}, 0x8049000);
  ASSERT_TRUE(insn);
  EXPECT_EQ(insn->length(), 1u);
  EXPECT_EQ(insn->path(), StepPath::OutOfLine);
}

TEST(ProbeArchTest, I386SlotCopiesAnAbsoluteOperandUnchangedAndJumpsBackAcrossAnyDistance) {
  // mov eax, [0x0804a000] (8b 05 disp32: absolute in 32-bit mode, not RIP-relative) at
  // 0x08049000; slot at 0xf7f00020, 3.9 GiB above: jmp rel32 wraps at 4 GiB.
  auto insn = plan(insn::Arch::I386, {0x8b, 0x05, 0x00, 0xa0, 0x04, 0x08}, 0x08049000);
  ASSERT_TRUE(insn);
  ASSERT_EQ(insn->path(), StepPath::OutOfLine);
  auto code = insn->slot_code(0xf7f00020);
  ASSERT_TRUE(code) << code.error().message;
  // back = 0x08049006 - (0xf7f00020 + 6 + 5) = -0xefeb7025 = 0x10148fdb (mod 2^32)
  const std::vector<uint8_t> expected = {0x8b, 0x05, 0x00, 0xa0, 0x04, 0x08, 0xe9, 0xdb, 0x8f, 0x14, 0x10};
  EXPECT_EQ(*code, expected);
  EXPECT_FALSE(insn->slot_code(0x1'0000'0000));  // 32-bit code cannot run there
}

TEST(ProbeArchTest, I386CallPushesAFourByteReturnAddress) {
  // call rel32 -0x20 at 0x08049010: target 0x08048ff5, pushes 0x08049015.
  auto insn = plan(insn::Arch::I386, {0xe8, 0xe0, 0xff, 0xff, 0xff}, 0x08049010);
  ASSERT_TRUE(insn);
  ASSERT_EQ(insn->path(), StepPath::Emulate);
  EXPECT_TRUE(insn->is_call());
  RegisterBlock registers{};
  registers.rip = 0x08049010;
  registers.rsp = 0xffffd000;
  FakeMemory memory;
  memory.put_u32(0xffffcffc, 0);
  memory.put_u32(0xffffcff8, 0xdeadbeef);
  ASSERT_TRUE(insn->emulate(registers, memory));
  EXPECT_EQ(registers.rip, 0x08048ff5u);
  EXPECT_EQ(registers.rsp, 0xffffcffcu);
  EXPECT_EQ(memory.u32(0xffffcffc), 0x08049015u);
  EXPECT_EQ(memory.u32(0xffffcff8), 0xdeadbeefu);  // nothing written below the 4-byte push
}

TEST(ProbeArchTest, I386IndirectCallThroughEbxReadsAFourByteTarget) {
  // call [ebx + 0x10] (ff 53 10) at 0x08049020, ebx = 0x0804c000: target from 0x0804c010.
  auto insn = plan(insn::Arch::I386, {0xff, 0x53, 0x10}, 0x08049020);
  ASSERT_TRUE(insn);
  ASSERT_EQ(insn->path(), StepPath::Emulate);
  RegisterBlock registers{};
  registers.rip = 0x08049020;
  registers.rsp = 0xffffd000;
  registers.rbx = 0x0804c000;
  FakeMemory memory;
  memory.put_u32(0x0804c010, 0xf7d81230);
  memory.put_u32(0x0804c014, 0x11111111);  // must not become the target's upper half
  ASSERT_TRUE(insn->emulate(registers, memory));
  EXPECT_EQ(registers.rip, 0xf7d81230u);
  EXPECT_EQ(registers.rsp, 0xffffcffcu);
  EXPECT_EQ(memory.u32(0xffffcffc), 0x08049023u);
}

TEST(ProbeArchTest, I386AbsoluteDisp32IndirectJumpHasNoBaseRegister) {
  // jmp [0x0804c00c] (ff 25 disp32; a non-PIC PLT entry): mod 0, rm 5 means no base in
  // 32-bit mode, so ebp must not be added. Runs out of line (location-independent); the
  // simulator's effective address is checked through the indirect call form ff 15.
  auto insn = plan(insn::Arch::I386, {0xff, 0x15, 0x0c, 0xc0, 0x04, 0x08}, 0x08049030);
  ASSERT_TRUE(insn);
  ASSERT_EQ(insn->path(), StepPath::Emulate);
  RegisterBlock registers{};
  registers.rip = 0x08049030;
  registers.rsp = 0xffffd000;
  registers.rbp = 0x1000;
  FakeMemory memory;
  memory.put_u32(0x0804c00c, 0x08049100);
  ASSERT_TRUE(insn->emulate(registers, memory));
  EXPECT_EQ(registers.rip, 0x08049100u);
  auto jump = plan(insn::Arch::I386, {0xff, 0x25, 0x0c, 0xc0, 0x04, 0x08}, 0x08049040);
  ASSERT_TRUE(jump);
  EXPECT_EQ(jump->path(), StepPath::OutOfLine);
}

TEST(ProbeArchTest, I386RelativeJumpWrapsAtFourGiB) {
  // jmp rel32 +0x20 at 0xffffffe0 (5 bytes): 0xffffffe5 + 0x20 wraps to 0x5.
  auto insn = plan(insn::Arch::I386, {0xe9, 0x20, 0x00, 0x00, 0x00}, 0xffffffe0);
  ASSERT_TRUE(insn);
  ASSERT_EQ(insn->path(), StepPath::Emulate);
  RegisterBlock registers{};
  registers.rip = 0xffffffe0;
  FakeMemory memory;
  ASSERT_TRUE(insn->emulate(registers, memory));
  EXPECT_EQ(registers.rip, 0x5u);
}

TEST(ProbeArchTest, I386ReturnAddressIsTheFourBytesAtEsp) {
  const ProbeArch& probe = arch_for(insn::Arch::I386);
  FakeMemory memory;
  memory.put_u32(0xffffd000, 0x080491a2);
  memory.put_u32(0xffffd004, 0x00000007);  // $arg1: not part of the return address
  RegisterBlock registers{};
  registers.rsp = 0xffffd000;
  auto address = probe.return_address_at_entry(registers, memory);
  ASSERT_TRUE(address) << address.error().message;
  EXPECT_EQ(*address, 0x080491a2u);
  EXPECT_EQ(probe.longest_return_pop(), 4u + 0xffff);
  SlotLayout layout = probe.slot_layout();
  EXPECT_EQ(layout.highest_end, uint64_t{1} << 32);
  EXPECT_EQ(layout.slot_size, 32u);
}

TEST(ProbeArchTest, I386RetImm16RunsOutOfLineAndTheSimulatorPopsFourByteWords) {
  // `ret 8` (c2 08 00) is location-independent: out of line.
  auto insn = plan(insn::Arch::I386, {0xc2, 0x08, 0x00}, 0x08049050);
  ASSERT_TRUE(insn);
  EXPECT_EQ(insn->path(), StepPath::OutOfLine);
  auto code = insn->slot_code(0x08040000);
  ASSERT_TRUE(code);
  EXPECT_EQ(code->size(), 3u + 5u);
  // The simulator's 32-bit ret: pops 4 bytes plus 8, esp wraps at 4 GiB.
  insn::x86::X86Insn ret;
  insn::x86::DecoderConfig config;
  config.mode = insn::x86::Mode::Protected32;
  const uint8_t bytes[] = {0xc2, 0x08, 0x00};
  ASSERT_EQ(insn::x86::decode(bytes, 0x08049050, config, ret), insn::x86::DecodeStatus::Ok);
  sim::x86::X86Regs regs;
  regs.gpr[sim::x86::kRsp] = 0xfffffffc;
  struct Stack final : sim::x86::SimMemory {
    Status read(uint64_t address, std::span<uint8_t> out) override {
      if (address != 0xfffffffc || out.size() != 4) return make_error("unexpected read");
      const uint32_t value = 0x08049100;
      std::memcpy(out.data(), &value, 4);
      return {};
    }
    Status write(uint64_t, std::span<const uint8_t>) override { return make_error("no writes"); }
  } stack;
  auto next = sim::x86::emulate(ret, 0x08049050, regs, stack);
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->rip, 0x08049100u);
  EXPECT_EQ(next->gpr[sim::x86::kRsp], 0x8u);  // 0xfffffffc + 4 + 8, modulo 4 GiB
}

TEST(ProbeArchTest, EveryI386RegisterNameIsFoundInTheSixtyFourBitBlockUnderItsOwnName) {
  // The 64-bit user_regs_struct field a 64-bit tracer finds each i386 register in.
  const std::map<std::string, size_t> field = {
      {"bx", offsetof(user_regs_struct, rbx)},     {"cx", offsetof(user_regs_struct, rcx)},
      {"dx", offsetof(user_regs_struct, rdx)},     {"si", offsetof(user_regs_struct, rsi)},
      {"di", offsetof(user_regs_struct, rdi)},     {"bp", offsetof(user_regs_struct, rbp)},
      {"ax", offsetof(user_regs_struct, rax)},     {"ds", offsetof(user_regs_struct, ds)},
      {"es", offsetof(user_regs_struct, es)},      {"fs", offsetof(user_regs_struct, fs)},
      {"gs", offsetof(user_regs_struct, gs)},      {"orig_ax", offsetof(user_regs_struct, orig_rax)},
      {"ip", offsetof(user_regs_struct, rip)},     {"cs", offsetof(user_regs_struct, cs)},
      {"flags", offsetof(user_regs_struct, eflags)}, {"sp", offsetof(user_regs_struct, rsp)},
      {"ss", offsetof(user_regs_struct, ss)},
  };
  const probe::ArchProbeAbi& abi = probe::probe_abi(insn::Arch::I386);
  ASSERT_EQ(abi.names.size(), field.size());
  for (const probe::RegisterName& name : abi.names) {
    ASSERT_TRUE(field.count(std::string(name.name))) << name.name;
    EXPECT_EQ(x86::i386_register_word(name.id), static_cast<int>(field.at(std::string(name.name)) / 8)) << name.name;
  }
  EXPECT_EQ(x86::i386_register_word(17), -1);
}

TEST(ProbeArchTest, ADecoderSubstituteIsUsedForX86_64) {
  bool called = false;
  auto probe = x86::make_probe_arch(insn::Arch::X86_64, [&](std::span<const uint8_t> bytes, uint64_t address,
                                                              insn::x86::X86Insn& out) {
    called = true;
    return insn::x86::decode(bytes, address, insn::x86::DecoderConfig{}, out);
  });
  const std::vector<uint8_t> nop = {0x90};
  ASSERT_TRUE(probe->plan(nop, 0x1000));
  EXPECT_TRUE(called);
}

}  // namespace
}  // namespace xprobe::arch
