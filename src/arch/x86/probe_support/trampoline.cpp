#include "arch/x86/probe_support/trampoline.h"

#include <array>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "arch/x86/probe_support/rel32.h"

namespace xprobe::arch::x86 {

using insn::x86::FlowKind;
using insn::x86::OpcodeMap;
using insn::x86::X86Insn;

namespace {

// Hardware register numbers of the saved block's words 0..14 (user_regs_struct order:
// r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi).
constexpr std::array<uint8_t, 15> kSavedRegisters = {15, 14, 13, 12, 5, 3, 11, 10, 9, 8, 0, 1, 2, 6, 7};
constexpr int32_t kFlagsSlot = 18 * 8;
constexpr int32_t kRspSlot = 19 * 8;
constexpr int32_t kRipSlot = 16 * 8;
constexpr int32_t kFrame = static_cast<int32_t>(kRedZone + kSavedBlockBytes);

class Emitter {
 public:
  explicit Emitter(uint64_t base) : base_(base) {}
  uint64_t here() const { return base_ + code_.size(); }
  std::vector<uint8_t>& code() { return code_; }

  void bytes(std::initializer_list<uint8_t> values) { code_.insert(code_.end(), values); }
  void append(std::span<const uint8_t> values) { code_.insert(code_.end(), values.begin(), values.end()); }
  void imm32(int32_t value) {
    uint8_t raw[4];
    std::memcpy(raw, &value, 4);
    code_.insert(code_.end(), raw, raw + 4);
  }
  void imm64(uint64_t value) {
    uint8_t raw[8];
    std::memcpy(raw, &value, 8);
    code_.insert(code_.end(), raw, raw + 8);
  }
  // mov [rsp + disp], reg (store) or mov reg, [rsp + disp] (load), 64-bit.
  void rsp_slot(bool store, uint8_t reg, int32_t disp) {
    bytes({static_cast<uint8_t>(0x48 | ((reg & 8) ? 0x04 : 0)), static_cast<uint8_t>(store ? 0x89 : 0x8b)});
    if (disp >= -128 && disp <= 127) {
      bytes({static_cast<uint8_t>(0x44 | ((reg & 7) << 3)), 0x24, static_cast<uint8_t>(disp)});
    } else {
      bytes({static_cast<uint8_t>(0x84 | ((reg & 7) << 3)), 0x24});
      imm32(disp);
    }
  }
  void lea_rsp(uint8_t reg, int32_t disp) {  // lea reg, [rsp + disp32]
    bytes({static_cast<uint8_t>(0x48 | ((reg & 8) ? 0x04 : 0)), 0x8d, static_cast<uint8_t>(0x84 | ((reg & 7) << 3)), 0x24});
    imm32(disp);
  }
  // op rel32 to `target`, `opcode` being the bytes before the rel32.
  Status rel32(std::initializer_list<uint8_t> opcode, uint64_t target) {
    if (!append_rel32_branch(code_, base_, opcode, target))
      return make_error(fmt::format("0x{:x} is out of rel32 reach of the trampoline at 0x{:x}", target, here()));
    return {};
  }

 private:
  uint64_t base_;
  std::vector<uint8_t> code_;
};

Status emit_displaced(Emitter& out, const DisplacedInstruction& displaced) {
  const X86Insn& insn = displaced.insn;
  switch (insn.flow) {
    case FlowKind::Jmp: return out.rel32({kJmpRel32}, insn.rel_target);
    case FlowKind::Jcc: {
      const auto condition = static_cast<uint8_t>(insn.opcode & 0x0f);
      return out.rel32({0x0f, static_cast<uint8_t>(0x80 | condition)}, insn.rel_target);
    }
    case FlowKind::Call:
      // The original return address, so that unwinders and the callee's ret see the program's code.
      out.bytes({0x50, 0x48, 0xb8});
      out.imm64(insn.address + insn.length);
      out.bytes({0x48, 0x87, 0x04, 0x24});
      return out.rel32({kJmpRel32}, insn.rel_target);
    default: {
      auto moved = relocate_rip_relative(displaced.bytes, insn, insn.address, out.here());
      if (!moved) return moved.error();
      out.append(*moved);
      return {};
    }
  }
}

}  // namespace

Result<std::vector<uint8_t>> relocate_rip_relative(std::span<const uint8_t> bytes, const X86Insn& insn,
                                                   uint64_t original, uint64_t moved_to) {
  if (insn.length == 0 || bytes.size() < insn.length) return make_error("instruction bytes shorter than its length");
  std::vector<uint8_t> code(bytes.begin(), bytes.begin() + insn.length);
  if (!insn.rip_relative) return code;
  if (insn.disp_size != 4 || insn.disp_offset + 4u > insn.length) return make_error("RIP-relative displacement is not a disp32");
  // Same target from the new place: moved_to + len + disp' == original + len + disp.
  const int64_t moved = insn.disp + static_cast<int64_t>(original - moved_to);
  if (!fits_rel32(moved)) {
    return make_error(fmt::format("RIP-relative target 0x{:x} is out of reach from 0x{:x}",
                                  original + insn.length + static_cast<uint64_t>(insn.disp), moved_to));
  }
  const auto disp32 = static_cast<int32_t>(moved);
  std::memcpy(code.data() + insn.disp_offset, &disp32, 4);
  return code;
}

Result<std::vector<uint8_t>> build_redirect(const BranchRedirect& redirect, uint64_t to) {
  auto rel = rel32_between(redirect.branch + redirect.length, to);
  if (!rel) return make_error(fmt::format("0x{:x} is out of rel32 reach of the branch at 0x{:x}", to, redirect.branch));
  std::vector<uint8_t> bytes(4);
  std::memcpy(bytes.data(), &*rel, 4);
  return bytes;
}

Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to) {
  Emitter out(from);
  if (auto ok = out.rel32({kJmpRel32}, to); !ok) return ok.error();
  return std::move(out.code());
}

Result<Trampoline> build_trampoline(const JumpPatchPlan& plan, const TrampolineTargets& targets) {
  Emitter out(targets.trampoline);
  Trampoline built;
  out.lea_rsp(4, -kFrame);
  for (size_t i = 0; i < kSavedRegisters.size(); ++i) out.rsp_slot(true, kSavedRegisters[i], static_cast<int32_t>(8 * i));
  out.bytes({0x9c, 0x58});  // pushfq; pop rax
  out.rsp_slot(true, 0, kFlagsSlot);
  out.lea_rsp(0, kFrame);
  out.rsp_slot(true, 0, kRspSlot);
  out.bytes({0x48, 0xb8});
  out.imm64(plan.address);
  out.rsp_slot(true, 0, kRipSlot);
  out.bytes({0xfc});  // cld
  if (targets.descriptors.empty() || targets.descriptors.size() > kMaxProbesPerTrampoline)
    return make_error("a trampoline calls the agent for 1 to 8 probes");
  out.bytes({0x48, 0x89, 0xe3, 0x48, 0x83, 0xe4, 0xf0});  // mov rbx, rsp; and rsp, -16
  for (uint64_t descriptor : targets.descriptors) {
    out.bytes({0x48, 0xbf});
    out.imm64(descriptor);
    out.bytes({0x48, 0x89, 0xde});  // mov rsi, rbx
    if (auto ok = out.rel32({0xe8}, targets.agent); !ok) return ok.error();
  }
  out.bytes({0x48, 0x89, 0xdc});  // mov rsp, rbx
  out.rsp_slot(false, 0, kFlagsSlot);
  out.bytes({0x50, 0x9d});  // push rax; popfq
  for (size_t i = 0; i < kSavedRegisters.size(); ++i) out.rsp_slot(false, kSavedRegisters[i], static_cast<int32_t>(8 * i));
  out.lea_rsp(4, kFrame);
  for (const DisplacedInstruction& displaced : plan.displaced) {
    built.displaced_at.push_back(out.here());
    if (auto ok = emit_displaced(out, displaced); !ok) return ok.error();
  }
  if (auto ok = out.rel32({kJmpRel32}, plan.address + plan.length); !ok) return ok.error();
  if (out.code().size() > kTrampolineSize) return make_error("trampoline overflow");
  built.code = std::move(out.code());
  return built;
}

}  // namespace xprobe::arch::x86
