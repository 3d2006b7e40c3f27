#include "arch/arm64/probe_support/a64_encode.h"

namespace xprobe::arch::arm64::a64 {
namespace {

// The word offset between `from` and `to` as a signed field of `bits` bits, or nullopt.
std::optional<uint32_t> word_offset(uint64_t from, uint64_t to, unsigned bits) {
  if (from % 4 != 0 || to % 4 != 0) return std::nullopt;
  const int64_t words = static_cast<int64_t>(to - from) / 4;
  const int64_t limit = int64_t{1} << (bits - 1);
  if (words < -limit || words >= limit) return std::nullopt;
  return static_cast<uint32_t>(words) & ((uint32_t{1} << bits) - 1);
}

}  // namespace

std::optional<uint32_t> b(uint64_t from, uint64_t to) {
  auto imm = word_offset(from, to, 26);
  if (!imm) return std::nullopt;
  return 0x14000000u | *imm;
}

std::optional<uint32_t> bl(uint64_t from, uint64_t to) {
  auto imm = word_offset(from, to, 26);
  if (!imm) return std::nullopt;
  return 0x94000000u | *imm;
}

std::optional<uint32_t> with_imm19(uint32_t word, uint64_t from, uint64_t to) {
  auto imm = word_offset(from, to, 19);
  if (!imm) return std::nullopt;
  return (word & ~(0x7ffffu << 5)) | (*imm << 5);
}

std::optional<uint32_t> with_imm14(uint32_t word, uint64_t from, uint64_t to) {
  auto imm = word_offset(from, to, 14);
  if (!imm) return std::nullopt;
  return (word & ~(0x3fffu << 5)) | (*imm << 5);
}

std::optional<uint32_t> ldr_x_literal(uint8_t rt, uint64_t from, uint64_t to) {
  return with_imm19(0x58000000u | (rt & 31u), from, to);
}

uint32_t br(uint8_t rn) { return 0xd61f0000u | ((rn & 31u) << 5); }
uint32_t ldr_w_base(uint8_t rt, uint8_t rn) { return 0xb9400000u | ((rn & 31u) << 5) | (rt & 31u); }
uint32_t ldr_x_base(uint8_t rt, uint8_t rn) { return 0xf9400000u | ((rn & 31u) << 5) | (rt & 31u); }
uint32_t ldrsw_base(uint8_t rt, uint8_t rn) { return 0xb9800000u | ((rn & 31u) << 5) | (rt & 31u); }

uint32_t stp_sp(uint8_t rt, uint8_t rt2, uint32_t offset) {
  return 0xa9000000u | ((offset / 8) << 15) | ((rt2 & 31u) << 10) | (31u << 5) | (rt & 31u);
}
uint32_t ldp_sp(uint8_t rt, uint8_t rt2, uint32_t offset) {
  return 0xa9400000u | ((offset / 8) << 15) | ((rt2 & 31u) << 10) | (31u << 5) | (rt & 31u);
}
uint32_t str_sp(uint8_t rt, uint32_t offset) { return 0xf9000000u | ((offset / 8) << 10) | (31u << 5) | (rt & 31u); }
uint32_t ldr_sp(uint8_t rt, uint32_t offset) { return 0xf9400000u | ((offset / 8) << 10) | (31u << 5) | (rt & 31u); }
uint32_t sub_sp(uint32_t bytes) { return 0xd10003ffu | ((bytes & 0xfffu) << 10); }
uint32_t add_sp(uint32_t bytes) { return 0x910003ffu | ((bytes & 0xfffu) << 10); }
uint32_t add_from_sp(uint8_t rd, uint32_t bytes) { return 0x910003e0u | ((bytes & 0xfffu) << 10) | (rd & 31u); }

void append(std::vector<uint8_t>& out, uint32_t word) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(word >> shift));
}

}  // namespace xprobe::arch::arm64::a64
