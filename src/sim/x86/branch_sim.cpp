#include "sim/x86/branch_sim.h"

#include <cstring>

#include <fmt/format.h>

namespace xprobe::sim::x86 {
namespace {

using insn::x86::FlowKind;
using insn::x86::Mode;
using insn::x86::OpcodeMap;
using insn::x86::X86Insn;

// 32-bit code pushes, pops and addresses 4-byte words and wraps at 4 GiB.
bool is32(const X86Insn& insn) { return insn.mode == Mode::Protected32; }
unsigned word_bytes(const X86Insn& insn) { return is32(insn) ? 4 : 8; }
uint64_t address_mask(const X86Insn& insn) { return is32(insn) ? 0xffffffffu : ~uint64_t{0}; }

Status push(X86Regs& regs, uint64_t value, unsigned width, uint64_t mask, SimMemory& memory) {
  uint64_t sp = (regs.gpr[kRsp] - width) & mask;
  uint8_t bytes[8];
  std::memcpy(bytes, &value, 8);
  if (auto written = memory.write(sp, std::span<const uint8_t>(bytes, width)); !written) {
    return make_error(fmt::format("cannot push the return address at 0x{:x}: {}", sp, written.error().message));
  }
  regs.gpr[kRsp] = sp;
  return {};
}

Result<uint64_t> read_word(uint64_t address, unsigned width, SimMemory& memory) {
  uint8_t bytes[8] = {};
  if (auto got = memory.read(address, std::span<uint8_t>(bytes, width)); !got) {
    return make_error(fmt::format("cannot read {} bytes at 0x{:x}: {}", width, address, got.error().message));
  }
  uint64_t value = 0;
  std::memcpy(&value, bytes, 8);
  return value;
}

bool is_indirect_near(const X86Insn& insn) {
  return insn.map == OpcodeMap::Primary && insn.opcode == 0xff && insn.has_modrm &&
         (insn.modrm_reg() == 2 || insn.modrm_reg() == 4);
}

Result<uint64_t> indirect_target(const X86Insn& insn, uint64_t pc, const X86Regs& regs, SimMemory& memory) {
  if (insn.modrm_mod() == 3) {
    uint8_t index = static_cast<uint8_t>(insn.modrm_rm() | ((insn.rex & 1) << 3));
    return regs.gpr[index] & address_mask(insn);
  }
  auto address = effective_address(insn, pc, regs);
  if (!address) return address.error();
  return read_word(*address, word_bytes(insn), memory);
}

}  // namespace

bool condition_holds(uint8_t cc, uint64_t rflags) {
  bool cf = rflags & flag::kCarry, pf = rflags & flag::kParity, zf = rflags & flag::kZero;
  bool sf = rflags & flag::kSign, of = rflags & flag::kOverflow;
  bool result = false;
  switch (cc >> 1) {
    case 0: result = of; break;
    case 1: result = cf; break;
    case 2: result = zf; break;
    case 3: result = cf || zf; break;
    case 4: result = sf; break;
    case 5: result = pf; break;
    case 6: result = sf != of; break;
    case 7: result = zf || (sf != of); break;
  }
  return (cc & 1) ? !result : result;  // odd codes are the negations
}

Result<uint64_t> effective_address(const X86Insn& insn, uint64_t pc, const X86Regs& regs) {
  if (!insn.has_modrm || insn.modrm_mod() == 3) return make_error("the instruction has no memory operand");
  uint64_t address = 0;
  if (insn.rip_relative) {
    address = pc + insn.length + static_cast<uint64_t>(insn.disp);
  } else {
    uint8_t mod = insn.modrm_mod();
    uint8_t rm = insn.modrm_rm();
    if (rm == 4) {
      if (!insn.has_sib) return make_error("ModRM needs a SIB byte the decoder did not report");
      uint8_t scale = insn.sib >> 6;
      uint8_t index = static_cast<uint8_t>(((insn.sib >> 3) & 7) | ((insn.rex & 2) << 2));
      uint8_t base = static_cast<uint8_t>((insn.sib & 7) | ((insn.rex & 1) << 3));
      if (index != 4) address += regs.gpr[index] << scale;
      if (!((insn.sib & 7) == 5 && mod == 0)) address += regs.gpr[base];
    } else if (!(mod == 0 && rm == 5)) {  // 32-bit mode: mod 0, rm 5 is a bare disp32
      uint8_t base = static_cast<uint8_t>(rm | ((insn.rex & 1) << 3));
      address += regs.gpr[base];
    }
    address += static_cast<uint64_t>(insn.disp);
  }
  if (insn.prefixes.address_size || is32(insn)) address &= 0xffffffffu;
  if (insn.prefixes.segment == 0x64) address += regs.fs_base;
  if (insn.prefixes.segment == 0x65) address += regs.gs_base;
  return address;
}

bool can_emulate(const X86Insn& insn) {
  // 32-bit code: an operand-size prefix makes a branch 16-bit (ip truncated to 16 bits) and
  // an address-size prefix makes addressing 16-bit (other ModRM meanings, cx counting):
  // neither appears in compiled code, so neither is emulated.
  if (is32(insn) && (insn.prefixes.operand_size || insn.prefixes.address_size)) return false;
  switch (insn.flow) {
    case FlowKind::Jmp:
    case FlowKind::Jcc:
      return insn.has_rel_target;
    case FlowKind::Call:
      return insn.has_rel_target && !insn.prefixes.operand_size;
    case FlowKind::Loop:
      // With 67, loop counts in ecx; whether the upper half of rcx survives is not something
      // we want to guess, so only jecxz (which writes nothing) takes a 67 prefix.
      return insn.has_rel_target && (!insn.prefixes.address_size || insn.opcode == 0xe3);
    case FlowKind::Ret:
      return insn.map == OpcodeMap::Primary && (insn.opcode == 0xc3 || insn.opcode == 0xc2) &&
             !insn.prefixes.operand_size;
    case FlowKind::IndirectCall:
    case FlowKind::IndirectJmp:
      return is_indirect_near(insn) && !insn.prefixes.operand_size;
    default:
      return false;
  }
}

Result<X86Regs> emulate(const X86Insn& insn, uint64_t pc, const X86Regs& regs, SimMemory& memory) {
  if (!can_emulate(insn)) return make_error(fmt::format("cannot emulate the instruction at 0x{:x}", pc));
  X86Regs out = regs;
  const unsigned width = word_bytes(insn);
  const uint64_t mask = address_mask(insn);
  uint64_t next = (pc + insn.length) & mask;
  // rel_target is relative to where the decoder was told the instruction is.
  uint64_t target = (insn.rel_target - insn.address + pc) & mask;
  switch (insn.flow) {
    case FlowKind::Jmp:
      out.rip = target;
      break;
    case FlowKind::Jcc:
      out.rip = condition_holds(static_cast<uint8_t>(insn.opcode & 0x0f), regs.rflags) ? target : next;
      break;
    case FlowKind::Call:
      if (auto pushed = push(out, next, width, mask, memory); !pushed) return pushed.error();
      out.rip = target;
      break;
    case FlowKind::Loop: {
      bool taken = false;
      const uint64_t counter_mask = insn.prefixes.address_size ? 0xffffffffu : mask;
      if (insn.opcode == 0xe3) {
        taken = (regs.gpr[kRcx] & counter_mask) == 0;
      } else {
        out.gpr[kRcx] = (regs.gpr[kRcx] - 1) & mask;
        bool zf = regs.rflags & flag::kZero;
        taken = out.gpr[kRcx] != 0;
        if (insn.opcode == 0xe0) taken = taken && !zf;  // loopne
        if (insn.opcode == 0xe1) taken = taken && zf;   // loope
      }
      out.rip = taken ? target : next;
      break;
    }
    case FlowKind::Ret: {
      auto return_address = read_word(regs.gpr[kRsp] & mask, width, memory);
      if (!return_address) return return_address.error();
      uint64_t pop = insn.opcode == 0xc2 ? static_cast<uint64_t>(insn.imm & 0xffff) : 0;
      out.gpr[kRsp] = (regs.gpr[kRsp] + width + pop) & mask;
      out.rip = *return_address & mask;
      break;
    }
    case FlowKind::IndirectCall:
    case FlowKind::IndirectJmp: {
      // The operand is read before the push: `call [rsp]` uses the old stack top.
      auto destination = indirect_target(insn, pc, regs, memory);
      if (!destination) return destination.error();
      if (insn.flow == FlowKind::IndirectCall) {
        if (auto pushed = push(out, next, width, mask, memory); !pushed) return pushed.error();
      }
      out.rip = *destination & mask;
      break;
    }
    default:
      return make_error(fmt::format("cannot emulate the instruction at 0x{:x}", pc));
  }
  return out;
}

}  // namespace xprobe::sim::x86
