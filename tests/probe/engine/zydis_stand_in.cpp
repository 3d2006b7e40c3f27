#include "zydis_stand_in.h"

#include <Zydis/Zydis.h>

#include "arch/registry.h"

namespace xprobe::testing {

using insn::x86::DecodeStatus;
using insn::x86::FlowKind;
using insn::x86::OpcodeMap;
using insn::x86::X86Insn;

DecodeStatus zydis_decode(std::span<const uint8_t> bytes, uint64_t address, X86Insn& out) {
  ZydisDecoder decoder;
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, bytes.data(), bytes.size(), &insn, operands))) {
    out.length = 0;
    return DecodeStatus::Invalid;
  }
  out = X86Insn{};
  out.address = address;
  out.length = insn.length;
  out.opcode = insn.opcode;
  switch (insn.opcode_map) {
    case ZYDIS_OPCODE_MAP_DEFAULT: out.map = OpcodeMap::Primary; break;
    case ZYDIS_OPCODE_MAP_0F: out.map = OpcodeMap::Map0F; break;
    case ZYDIS_OPCODE_MAP_0F38: out.map = OpcodeMap::Map0F38; break;
    case ZYDIS_OPCODE_MAP_0F3A: out.map = OpcodeMap::Map0F3A; break;
    default: out.map = OpcodeMap::Map0F; break;
  }
  out.prefixes.operand_size = insn.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE;
  out.prefixes.address_size = insn.attributes & ZYDIS_ATTRIB_HAS_ADDRESSSIZE;
  if (insn.attributes & ZYDIS_ATTRIB_HAS_SEGMENT_FS) out.prefixes.segment = 0x64;
  if (insn.attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS) out.prefixes.segment = 0x65;
  if (insn.attributes & ZYDIS_ATTRIB_HAS_REX) {
    out.rex = static_cast<uint8_t>(0x40 | insn.raw.rex.W << 3 | insn.raw.rex.R << 2 | insn.raw.rex.X << 1 | insn.raw.rex.B);
  }
  if (insn.attributes & ZYDIS_ATTRIB_HAS_MODRM) {
    out.has_modrm = true;
    out.modrm = static_cast<uint8_t>(insn.raw.modrm.mod << 6 | insn.raw.modrm.reg << 3 | insn.raw.modrm.rm);
    out.modrm_offset = insn.raw.modrm.offset;
  }
  if (insn.attributes & ZYDIS_ATTRIB_HAS_SIB) {
    out.has_sib = true;
    out.sib = static_cast<uint8_t>(insn.raw.sib.scale << 6 | insn.raw.sib.index << 3 | insn.raw.sib.base);
  }
  out.disp_size = static_cast<uint8_t>(insn.raw.disp.size / 8);
  out.disp_offset = insn.raw.disp.offset;
  out.disp = insn.raw.disp.value;
  out.imm_size = static_cast<uint8_t>(insn.raw.imm[0].size / 8);
  out.imm_offset = insn.raw.imm[0].offset;
  out.imm = insn.raw.imm[0].value.s;
  for (unsigned i = 0; i < insn.operand_count; ++i) {
    const ZydisDecodedOperand& operand = operands[i];
    if (operand.type == ZYDIS_OPERAND_TYPE_MEMORY && operand.mem.base == ZYDIS_REGISTER_RIP) out.rip_relative = true;
    if (operand.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && operand.imm.is_relative) {
      ZyanU64 target = 0;
      if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&insn, &operand, address, &target))) {
        out.has_rel_target = true;
        out.rel_target = target;
      }
    }
  }
  bool far = insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_JMP: out.flow = far ? FlowKind::FarTransfer : out.has_rel_target ? FlowKind::Jmp : FlowKind::IndirectJmp; break;
    case ZYDIS_MNEMONIC_CALL: out.flow = far ? FlowKind::FarTransfer : out.has_rel_target ? FlowKind::Call : FlowKind::IndirectCall; break;
    case ZYDIS_MNEMONIC_RET: out.flow = far ? FlowKind::FarTransfer : FlowKind::Ret; break;
    case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
    case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JRCXZ: out.flow = FlowKind::Loop; break;
    case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER: out.flow = FlowKind::Syscall; break;
    case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INTO: case ZYDIS_MNEMONIC_INT1: out.flow = FlowKind::Interrupt; break;
    case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2: out.flow = FlowKind::Ud; break;
    case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ: out.flow = FlowKind::Iret; break;
    default:
      if (insn.meta.category == ZYDIS_CATEGORY_COND_BR) out.flow = FlowKind::Jcc;
      break;
  }
  return DecodeStatus::Ok;
}

bool project_decoder_works() {
  const uint8_t nop[] = {0x90};
  insn::x86::X86Insn insn;
  return insn::x86::decode(nop, 0x1000, insn::x86::DecoderConfig{}, insn) == DecodeStatus::Ok && insn.length == 1;
}

arch::x86::DecodeFunction engine_decoder() {
  if (!project_decoder_works()) return zydis_decode;
  return [](std::span<const uint8_t> bytes, uint64_t address, insn::x86::X86Insn& out) {
    return insn::x86::decode(bytes, address, insn::x86::DecoderConfig{}, out);
  };
}

probe::engine::ProbeArchChooser engine_arch() {
  if (project_decoder_works()) return arch::probe_arch;
  return [](insn::Arch code) -> Result<const arch::ProbeArch*> {
    static const std::unique_ptr<arch::ProbeArch> zydis_x86_64 = arch::x86::make_probe_arch(insn::Arch::X86_64, zydis_decode);
    if (code == insn::Arch::X86_64) return zydis_x86_64.get();
    return arch::probe_arch(code);
  };
}

}  // namespace xprobe::testing
