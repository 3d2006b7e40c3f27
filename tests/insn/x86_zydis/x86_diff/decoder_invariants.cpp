#include "x86_diff/decoder_invariants.h"

#include <fmt/format.h>

#include <vector>

#include "support/hex.h"

namespace xprobe::test::x86 {

using insn::x86::DecodeStatus;
using insn::x86::DecoderConfig;
using insn::x86::Encoding;
using insn::x86::FlowKind;
using insn::x86::Mode;
using insn::x86::Vendor;
using insn::x86::X86Insn;

namespace {

constexpr size_t kMaxLength = 15;

uint64_t read_le(std::span<const uint8_t> bytes, size_t offset, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) value |= uint64_t{bytes[offset + i]} << (8 * i);
  return value;
}

int64_t sign_extend(uint64_t value, size_t size) {
  if (size == 0 || size >= 8) return static_cast<int64_t>(value);
  const unsigned bits = static_cast<unsigned>(8 * size);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((value ^ sign) - sign);
}

bool valid_field_size(uint8_t size, bool allow8) { return size == 0 || size == 1 || size == 2 || size == 4 || (allow8 && size == 8); }

// Checks one field [offset, offset+size) lies after `cursor` inside the instruction and
// advances the cursor: fields appear in the order the manuals give (SDM vol. 2 fig. 2-1).
std::string check_field(const char* name, uint8_t offset, uint8_t size, size_t& cursor, uint8_t length) {
  if (size == 0) return {};
  if (offset < cursor) return fmt::format("{} at offset {} overlaps the field before it (ends at {})", name, offset, cursor);
  if (size_t{offset} + size > length) return fmt::format("{} [{}, +{}) extends past length {}", name, offset, size, length);
  cursor = size_t{offset} + size;
  return {};
}

std::string check_ok(std::span<const uint8_t> bytes, uint64_t address, const DecoderConfig& config, const X86Insn& insn) {
  const uint8_t length = insn.length;
  if (length == 0 || length > kMaxLength) return fmt::format("length {} outside 1..15", length);
  if (length > bytes.size()) return fmt::format("length {} longer than the {} input bytes", length, bytes.size());
  if (insn.mode != config.mode) return "insn.mode differs from the configured mode";
  if (insn.address != address) return fmt::format("insn.address {:#x}, decoded at {:#x}", insn.address, address);
  if (insn.opcode_offset >= length) return fmt::format("opcode offset {} outside length {}", insn.opcode_offset, length);
  if (insn.prefixes.count > insn.opcode_offset) return "more legacy prefixes than bytes before the opcode";
  if (config.mode != Mode::Long64 && insn.rex != 0) return "REX recorded outside 64-bit mode";
  if (insn.rex != 0 && (insn.rex & 0xf0) != 0x40) return fmt::format("rex field {:#x} is not a REX byte", insn.rex);

  const bool three_dnow = insn.encoding == Encoding::ThreeDNow;
  // 3DNow!'s opcode is the suffix byte after ModRM/SIB/displacement; elsewhere the opcode
  // comes first and every other field follows it.
  if (three_dnow) {
    if (insn.opcode_offset != length - 1) return "3DNow! opcode suffix is not the last byte";
  } else if (bytes[insn.opcode_offset] != insn.opcode) {
    return fmt::format("opcode {:#04x} but the byte at its offset is {:#04x}", insn.opcode, bytes[insn.opcode_offset]);
  }
  size_t cursor = three_dnow ? 2u + insn.prefixes.count : size_t{insn.opcode_offset} + 1;
  if (three_dnow && bytes[insn.opcode_offset] != insn.opcode) return "3DNow! suffix does not match the last byte";

  if (insn.has_modrm) {
    if (insn.modrm_offset < cursor && !three_dnow) return fmt::format("ModRM at {} before the end of the opcode", insn.modrm_offset);
    if (insn.modrm_offset >= length) return fmt::format("ModRM offset {} outside length {}", insn.modrm_offset, length);
    if (bytes[insn.modrm_offset] != insn.modrm) return "ModRM value differs from the byte at its offset";
    cursor = size_t{insn.modrm_offset} + 1;
  }
  if (insn.has_sib) {
    if (!insn.has_modrm) return "SIB without ModRM";
    if (insn.modrm_mod() == 3 || insn.modrm_rm() != 4) return "SIB recorded but ModRM does not call for one";
    if (config.mode == Mode::Protected32 && insn.prefixes.address_size) return "SIB recorded with 16-bit addressing";
    if (size_t{insn.modrm_offset} + 1 >= length) return "SIB outside the instruction";
    if (bytes[insn.modrm_offset + 1] != insn.sib) return "SIB value differs from the byte after ModRM";
    cursor = size_t{insn.modrm_offset} + 2;
  }
  if (!valid_field_size(insn.disp_size, true)) return fmt::format("displacement size {}", insn.disp_size);
  if (!valid_field_size(insn.imm_size, true)) return fmt::format("immediate size {}", insn.imm_size);
  if (!valid_field_size(insn.imm2_size, true)) return fmt::format("second immediate size {}", insn.imm2_size);
  if (auto e = check_field("displacement", insn.disp_offset, insn.disp_size, cursor, length); !e.empty()) return e;
  if (auto e = check_field("immediate", insn.imm_offset, insn.imm_size, cursor, length); !e.empty()) return e;
  if (auto e = check_field("second immediate", insn.imm2_offset, insn.imm2_size, cursor, length); !e.empty()) return e;
  if (three_dnow) {
    if (cursor != insn.opcode_offset) return "3DNow! fields do not end right before the suffix";
  } else if (cursor != length) {
    return fmt::format("fields end at {} but length is {}: bytes not accounted for", cursor, length);
  }

  // EVEX disp8 is the raw byte too (the contract leaves the disp8*N scaling to the user).
  if (insn.disp_size != 0) {
    const uint64_t raw = read_le(bytes, insn.disp_offset, insn.disp_size);
    if (insn.disp != sign_extend(raw, insn.disp_size) && insn.disp != static_cast<int64_t>(raw))
      return fmt::format("displacement value {:#x} does not match its bytes {:#x}", insn.disp, raw);
  }
  if (insn.rip_relative) {
    if (config.mode != Mode::Long64) return "RIP-relative outside 64-bit mode";
    if (!insn.has_modrm || insn.modrm_mod() != 0 || insn.modrm_rm() != 5 || insn.has_sib || insn.disp_size != 4)
      return "RIP-relative without ModRM mod=00 rm=101 and a disp32";
  }

  const bool relative_branch = insn.flow == FlowKind::Jmp || insn.flow == FlowKind::Jcc ||
                               insn.flow == FlowKind::Call || insn.flow == FlowKind::Loop;
  if (relative_branch && !insn.has_rel_target) return "relative branch without a target";
  if (insn.has_rel_target) {
    if (insn.imm_size != 1 && insn.imm_size != 2 && insn.imm_size != 4)
      return fmt::format("relative target with a {}-byte displacement", insn.imm_size);
    const int64_t rel = sign_extend(read_le(bytes, insn.imm_offset, insn.imm_size), insn.imm_size);
    const uint64_t next = address + length + static_cast<uint64_t>(rel);
    const uint64_t full = config.mode == Mode::Long64 ? next : (next & 0xffffffffu);
    // A 66 prefix may truncate the target to 16 bits (always in 32-bit mode, on AMD in 64-bit mode).
    const bool may_be_16 = insn.prefixes.operand_size;
    if (insn.rel_target != full && !(may_be_16 && insn.rel_target == (next & 0xffff)))
      return fmt::format("rel_target {:#x}, expected address+length+disp = {:#x}", insn.rel_target, full);
  }
  return {};
}

}  // namespace

std::string check_decoder_invariants(std::span<const uint8_t> bytes, uint64_t address, const DecoderConfig& config,
                                     DecodeStatus status, const X86Insn& insn) {
  if (insn.length > kMaxLength || insn.length > bytes.size())
    return fmt::format("{}: out.length {} (input {} bytes)", static_cast<int>(status), insn.length, bytes.size());
  if (status == DecodeStatus::Ok) return check_ok(bytes, address, config, insn);
  return {};
}

std::string decode_and_check_all_configs(std::span<const uint8_t> input, uint64_t address) {
  // A buffer of exactly the input's size, so that AddressSanitizer sees any read past it
  // (a caller's vector may have spare capacity behind its end).
  const std::vector<uint8_t> own(input.begin(), input.end());
  const std::span<const uint8_t> bytes(own);
  for (Mode mode : {Mode::Long64, Mode::Protected32}) {
    for (Vendor vendor : {Vendor::Intel, Vendor::Amd}) {
      const DecoderConfig config{mode, vendor};
      X86Insn insn;
      const DecodeStatus status = insn::x86::decode(bytes, address, config, insn);
      auto where = [&] {
        return fmt::format("{} [{} {} at {:#x}]: ", format_hex_bytes(bytes), mode == Mode::Long64 ? "64-bit" : "32-bit",
                           vendor == Vendor::Intel ? "intel" : "amd", address);
      };
      if (std::string problem = check_decoder_invariants(bytes, address, config, status, insn); !problem.empty())
        return where() + problem;
      if (status != DecodeStatus::Ok) continue;
      // The instruction alone decodes the same; without its last byte it is truncated. Both
      // get buffers of their own, so that AddressSanitizer sees a read past either end.
      const std::vector<uint8_t> exact(bytes.begin(), bytes.begin() + insn.length);
      X86Insn again;
      if (insn::x86::decode(exact, address, config, again) != DecodeStatus::Ok || again.length != insn.length)
        return where() + fmt::format("the {} instruction bytes alone do not decode to the same length", insn.length);
      const std::vector<uint8_t> cut_bytes(exact.begin(), exact.end() - 1);
      X86Insn shorter;
      const DecodeStatus cut = insn::x86::decode(cut_bytes, address, config, shorter);
      if (cut != DecodeStatus::Truncated)
        return where() + fmt::format("without its last byte the instruction decodes as {}, not Truncated",
                                     static_cast<int>(cut));
    }
  }
  return {};
}

}  // namespace xprobe::test::x86
