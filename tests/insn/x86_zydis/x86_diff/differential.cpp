#include "x86_diff/differential.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/hex.h"

namespace xprobe::test::x86 {

using insn::x86::DecodeStatus;
using insn::x86::Mode;
using insn::x86::Vendor;

const char* decode_status_name(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::Ok: return "ok";
    case DecodeStatus::Truncated: return "truncated";
    case DecodeStatus::TooLong: return "too-long";
    case DecodeStatus::Invalid: return "invalid";
  }
  return "?";
}

Comparison compare_decoders(std::span<const uint8_t> bytes, const insn::x86::DecoderConfig& config,
                            const ZydisOracle& oracle) {
  Comparison comparison;
  comparison.bytes = bytes;
  comparison.config = config;
  comparison.ours = insn::x86::decode(bytes, 0x401000, config, comparison.insn);
  comparison.zydis = oracle.decode(bytes);
  if (!comparison.agrees()) comparison.shape = scan_raw_shape(bytes, config.mode);
  return comparison;
}

namespace {

// The control-flow kind Zydis's mnemonic and branch type imply, in xprobe's terms.
insn::x86::FlowKind zydis_flow(const ZydisDecodedInstruction& z) {
  using insn::x86::FlowKind;
  const bool relative = z.raw.imm[0].is_relative != 0;
  const bool far = z.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
  switch (z.mnemonic) {
    case ZYDIS_MNEMONIC_JMP: return relative ? FlowKind::Jmp : far ? FlowKind::FarTransfer : FlowKind::IndirectJmp;
    case ZYDIS_MNEMONIC_CALL: return relative ? FlowKind::Call : far ? FlowKind::FarTransfer : FlowKind::IndirectCall;
    case ZYDIS_MNEMONIC_RET: return far ? FlowKind::FarTransfer : FlowKind::Ret;
    case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE: case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE:
    case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE: case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE:
    case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP: case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ:
    case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP: case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JZ:
      return FlowKind::Jcc;
    case ZYDIS_MNEMONIC_XBEGIN:
      return FlowKind::Jcc;  // falls through, or on abort continues at the target: both successors
    case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
    case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ: case ZYDIS_MNEMONIC_JRCXZ:
      return FlowKind::Loop;
    case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT1: case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INTO:
      return FlowKind::Interrupt;
    case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER: case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_SYSRET:
      return FlowKind::Syscall;
    case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_UIRET:  // pops RIP, RFLAGS and RSP like IRET (SDM vol. 2 UIRET)
      return FlowKind::Iret;
    case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2:
      return FlowKind::Ud;
    default:
      return FlowKind::None;
  }
}

}  // namespace

bool Comparison::agrees() const {
  if (ours != zydis.status) return false;
  if (ours != DecodeStatus::Ok) return true;
  return insn.length == zydis.length && field_mismatch().empty();
}

std::string Comparison::field_mismatch() const {
  const ZydisDecodedInstruction& z = zydis.insn;
  const bool z_modrm = (z.attributes & ZYDIS_ATTRIB_HAS_MODRM) != 0;
  if (insn.has_modrm != z_modrm || (z_modrm && insn.modrm_offset != z.raw.modrm.offset)) return "modrm";
  if (insn.has_sib != ((z.attributes & ZYDIS_ATTRIB_HAS_SIB) != 0)) return "sib";
  if (insn.disp_size * 8u != z.raw.disp.size || (insn.disp_size != 0 && insn.disp_offset != z.raw.disp.offset))
    return "disp";
  if (insn.imm_size * 8u != z.raw.imm[0].size || (insn.imm_size != 0 && insn.imm_offset != z.raw.imm[0].offset))
    return "imm";
  if (insn.imm2_size * 8u != z.raw.imm[1].size || (insn.imm2_size != 0 && insn.imm2_offset != z.raw.imm[1].offset))
    return "imm2";
  if (insn.flow != zydis_flow(z)) return "flow";
  const bool z_relative = z.raw.imm[0].is_relative != 0;
  if (insn.has_rel_target != z_relative) return "has-rel-target";
  if (z_relative) {
    // The new instruction pointer is truncated to the operand size, but in 64-bit mode a
    // 32-bit operand size (Zydis reports one for XBEGIN rel32) still yields a 64-bit RIP.
    uint64_t target = insn.address + z.length + static_cast<uint64_t>(z.raw.imm[0].value.s);
    if (z.operand_width == 16) target &= 0xffff;
    if (config.mode != Mode::Long64) target &= 0xffffffff;
    if (insn.rel_target != target) return "rel-target";
  }
  return {};
}

namespace {

std::string verdict(DecodeStatus status, uint8_t length) {
  return status == DecodeStatus::Ok ? fmt::format("ok({})", length) : decode_status_name(status);
}

std::string zydis_verdict(const OracleResult& zydis) {
  return zydis.status == DecodeStatus::Ok ? fmt::format("ok({})", zydis.length) : zydis_status_name(zydis.zydis_status);
}

}  // namespace

std::string Comparison::disagreement_class(bool coarse) const {
  const char* mode = config.mode == Mode::Long64 ? "64" : "32";
  std::string what;
  if (ours == DecodeStatus::Ok && zydis.status == DecodeStatus::Ok) {
    what = insn.length != zydis.length ? "length-differs" : "field-differs:" + field_mismatch();
  } else {
    // Classes by verdict kind only (lengths vary within one opcode class).
    const std::string ours_text = ours == DecodeStatus::Ok ? "ok" : decode_status_name(ours);
    const std::string zydis_text = zydis.status == DecodeStatus::Ok ? "ok" : zydis_status_name(zydis.zydis_status);
    what = "ours=" + ours_text + " zydis=" + zydis_text;
  }
  return fmt::format("{} {} {}", mode, what, describe_opcode_class(shape, coarse));
}

namespace {

// "modrm@2 disp@3:4 imm@7:1 rel=0x40100c": where the fields are, for field disagreements.
std::string our_layout(const insn::x86::X86Insn& insn) {
  std::string text;
  if (insn.has_modrm) text += fmt::format(" modrm@{}{}", insn.modrm_offset, insn.has_sib ? "+sib" : "");
  if (insn.disp_size != 0) text += fmt::format(" disp@{}:{}", insn.disp_offset, insn.disp_size);
  if (insn.imm_size != 0) text += fmt::format(" imm@{}:{}", insn.imm_offset, insn.imm_size);
  if (insn.imm2_size != 0) text += fmt::format(" imm2@{}:{}", insn.imm2_offset, insn.imm2_size);
  if (insn.has_rel_target) text += fmt::format(" rel={:#x}", insn.rel_target);
  if (insn.flow != insn::x86::FlowKind::None) text += fmt::format(" flow={}", insn::x86::flow_kind_name(insn.flow));
  return text;
}

std::string zydis_layout(const ZydisDecodedInstruction& z) {
  std::string text;
  if ((z.attributes & ZYDIS_ATTRIB_HAS_MODRM) != 0)
    text += fmt::format(" modrm@{}{}", z.raw.modrm.offset, (z.attributes & ZYDIS_ATTRIB_HAS_SIB) != 0 ? "+sib" : "");
  if (z.raw.disp.size != 0) text += fmt::format(" disp@{}:{}", z.raw.disp.offset, z.raw.disp.size / 8);
  for (const auto& imm : z.raw.imm)
    if (imm.size != 0) text += fmt::format(" imm@{}:{}{}", imm.offset, imm.size / 8, imm.is_relative ? "(rel)" : "");
  return text;
}

}  // namespace

std::string describe_case(const Comparison& comparison) {
  std::string text = fmt::format("{} [{} {}] ours={} zydis={}", format_hex_bytes(comparison.bytes),
                                 comparison.config.mode == Mode::Long64 ? "64-bit" : "32-bit",
                                 comparison.config.vendor == Vendor::Intel ? "intel" : "amd",
                                 verdict(comparison.ours, comparison.insn.length), zydis_verdict(comparison.zydis));
  if (comparison.zydis.status == DecodeStatus::Ok)
    text += fmt::format(" ({})", ZydisMnemonicGetString(comparison.zydis.insn.mnemonic));
  if (comparison.ours == DecodeStatus::Ok && comparison.zydis.status == DecodeStatus::Ok)
    text += " ours:" + our_layout(comparison.insn) + " zydis:" + zydis_layout(comparison.zydis.insn);
  return text;
}

void DisagreementTally::add(const Comparison& comparison, const char* mutation) {
  ++total_;
  ClassStats& stats = classes_[comparison.disagreement_class(coarse_)];
  if (stats.count++ == 0) stats.example = describe_case(comparison) + " (" + mutation + ")";
}

void DisagreementTally::add_expected(const ExpectedException& exception) { ++expected_[exception.name]; }

std::string DisagreementTally::report(size_t limit) const {
  std::vector<std::pair<std::string, const ClassStats*>> sorted;
  for (const auto& [name, stats] : classes_) sorted.emplace_back(name, &stats);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i)
    text += fmt::format("  {:>8}  {}\n            e.g. {}\n", sorted[i].second->count, sorted[i].first,
                        sorted[i].second->example);
  if (sorted.size() > limit) text += fmt::format("  ... and {} more classes\n", sorted.size() - limit);
  return text;
}

std::string DisagreementTally::expected_report() const {
  std::string text;
  for (const auto& [name, count] : expected_) text += fmt::format("  {:>8}  {}\n", count, name);
  return text;
}

const ExpectedException* find_expected_exception(const Comparison& comparison) {
  for (const ExpectedException& exception : expected_exceptions())
    if (exception.matches(comparison)) return &exception;
  return nullptr;
}

}  // namespace xprobe::test::x86
