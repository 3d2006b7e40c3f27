#include "sim/arm64/simulator.h"

#include <cstring>

#include <fmt/format.h>

namespace xprobe::sim::arm64 {

using insn::arm64::Arm64Insn;
using insn::arm64::InsnClass;
using insn::arm64::PacKey;

bool condition_holds(uint8_t cond, uint32_t nzcv) {
  const bool n = (nzcv >> 31) & 1, z = (nzcv >> 30) & 1, c = (nzcv >> 29) & 1, v = (nzcv >> 28) & 1;
  bool result = false;
  switch ((cond >> 1) & 0b111) {
    case 0b000: result = z; break;
    case 0b001: result = c; break;
    case 0b010: result = n; break;
    case 0b011: result = v; break;
    case 0b100: result = c && !z; break;
    case 0b101: result = n == v; break;
    case 0b110: result = n == v && !z; break;
    default: result = true; break;
  }
  // Odd conditions invert, except 1111 (NV), which is "always" like 1110.
  if ((cond & 1) != 0 && cond != 0b1111) result = !result;
  return result;
}

namespace {

// X[n] reads of register 31 give zero in every simulated class (no SP operand).
uint64_t read_x(const Registers& regs, uint8_t n) { return n == 31 ? 0 : regs.x[n]; }
void write_x(Registers& regs, uint8_t n, uint64_t value) {
  if (n != 31) regs.x[n] = value;
}

uint64_t strip_pac(uint64_t address, unsigned va_bits) {
  if (va_bits >= 64) return address;
  const uint64_t low_mask = (uint64_t{1} << va_bits) - 1;
  const bool upper = ((address >> 55) & 1) != 0;
  return upper ? (address | ~low_mask) : (address & low_mask);
}

uint64_t branch_target(const Arm64Insn& insn, const Registers& regs, const SimulateOptions& options) {
  const uint64_t value = read_x(regs, insn.rn);
  if (insn.pac == PacKey::None || options.pointer_auth == PointerAuth::KeysDisabled) return value;
  return strip_pac(value, options.virtual_address_bits);
}

Status load_literal(const Arm64Insn& insn, uint64_t address, Registers& regs, MemoryReader& memory) {
  std::array<uint8_t, 16> bytes{};
  if (!memory.read(address, bytes.data(), insn.literal_size)) {
    return make_error(fmt::format("cannot read the {}-byte literal at {:#x}", insn.literal_size, address));
  }
  uint64_t value = 0;
  std::memcpy(&value, bytes.data(), insn.literal_size < 8 ? insn.literal_size : 8);  // little-endian host
  switch (insn.cls) {
    case InsnClass::LdrLiteral:
      write_x(regs, insn.rd, value);  // a W load zero-extends: the upper bytes stayed zero
      break;
    case InsnClass::LdrswLiteral:
      write_x(regs, insn.rd, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(value))));
      break;
    default:  // LdrLiteralSimd: the rest of the 128-bit register is cleared
      regs.v[insn.rd] = bytes;
      break;
  }
  return {};
}

}  // namespace

Result<Registers> simulate(const Arm64Insn& insn, uint64_t pc, const Registers& registers, MemoryReader& memory,
                           const SimulateOptions& options) {
  Registers out = registers;
  const uint64_t next = pc + 4;
  const uint64_t relative = pc + static_cast<uint64_t>(insn.offset);
  out.pc = next;
  switch (insn.cls) {
    case InsnClass::Adr:
      write_x(out, insn.rd, relative);
      break;
    case InsnClass::Adrp:
      write_x(out, insn.rd, (pc & ~uint64_t{0xfff}) + static_cast<uint64_t>(insn.offset));
      break;
    case InsnClass::B:
      out.pc = relative;
      break;
    case InsnClass::Bl:
      out.x[30] = next;
      out.pc = relative;
      break;
    case InsnClass::BCond:
      if (condition_holds(insn.cond, registers.nzcv)) out.pc = relative;
      break;
    case InsnClass::Cbz:
    case InsnClass::Cbnz: {
      uint64_t value = read_x(registers, insn.rn);
      if (!insn.is_64bit) value &= 0xffffffffu;
      if ((value == 0) == (insn.cls == InsnClass::Cbz)) out.pc = relative;
      break;
    }
    case InsnClass::Tbz:
    case InsnClass::Tbnz: {
      const bool set = ((read_x(registers, insn.rn) >> insn.test_bit) & 1) != 0;
      if (set == (insn.cls == InsnClass::Tbnz)) out.pc = relative;
      break;
    }
    case InsnClass::LdrLiteral:
    case InsnClass::LdrswLiteral:
    case InsnClass::LdrLiteralSimd:
      if (auto status = load_literal(insn, relative, out, memory); !status) return status.error();
      break;
    case InsnClass::PrfmLiteral:  // a hint: no architectural effect, no memory access needed
      break;
    case InsnClass::Br:
      out.pc = branch_target(insn, registers, options);
      break;
    case InsnClass::Blr:
      out.pc = branch_target(insn, registers, options);  // read before X30 is written (BLR X30)
      out.x[30] = next;
      break;
    case InsnClass::Ret:
      out.pc = branch_target(insn, registers, options);
      break;
    default:
      return make_error(fmt::format("the {} instruction {:08x} is not simulated",
                                    insn::arm64::class_name(insn.cls), insn.word));
  }
  return out;
}

}  // namespace xprobe::sim::arm64
