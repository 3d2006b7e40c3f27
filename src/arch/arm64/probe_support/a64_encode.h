#pragma once
// The A64 words the jump engine writes (trampolines, jumps, relocated instructions), encoded
// from the Arm ARM's encoding tables. Each returns nullopt when the operand does not fit the
// field (a distance out of reach, a misaligned offset), never a wrong word.
#include <cstdint>
#include <optional>
#include <vector>

namespace xprobe::arch::arm64::a64 {

// Branches, `from` being the branch's own address.
std::optional<uint32_t> b(uint64_t from, uint64_t to);   // B: +-128 MiB
std::optional<uint32_t> bl(uint64_t from, uint64_t to);  // BL: +-128 MiB
// `word` (B.cond/BC.cond, CBZ/CBNZ: imm19; TBZ/TBNZ: imm14) with its offset field set to
// reach `to` from `from`.
std::optional<uint32_t> with_imm19(uint32_t word, uint64_t from, uint64_t to);
std::optional<uint32_t> with_imm14(uint32_t word, uint64_t from, uint64_t to);
// LDR (literal) of `word`'s kind (W, X, LDRSW, S/D/Q: bits 31:24 kept, Rt kept) reading `to`.
inline std::optional<uint32_t> literal_at(uint32_t word, uint64_t from, uint64_t to) { return with_imm19(word, from, to); }
// LDR Xt, label (the literal 8-byte aligned or not, within +-1 MiB).
std::optional<uint32_t> ldr_x_literal(uint8_t rt, uint64_t from, uint64_t to);

uint32_t br(uint8_t rn);
// Loads from [Xn] into Rt: LDR Wt / LDR Xt / LDRSW Xt (unsigned offset 0).
uint32_t ldr_w_base(uint8_t rt, uint8_t rn);
uint32_t ldr_x_base(uint8_t rt, uint8_t rn);
uint32_t ldrsw_base(uint8_t rt, uint8_t rn);

// Stack-pointer relative forms (sp as the base; offsets in bytes, multiples of 8, < 504 for
// the pairs, < 32768 for single words).
uint32_t stp_sp(uint8_t rt, uint8_t rt2, uint32_t offset);
uint32_t ldp_sp(uint8_t rt, uint8_t rt2, uint32_t offset);
uint32_t str_sp(uint8_t rt, uint32_t offset);
uint32_t ldr_sp(uint8_t rt, uint32_t offset);
uint32_t sub_sp(uint32_t bytes);                // SUB sp, sp, #bytes (< 4096)
uint32_t add_sp(uint32_t bytes);                // ADD sp, sp, #bytes
uint32_t add_from_sp(uint8_t rd, uint32_t bytes);  // ADD Xd, sp, #bytes (MOV Xd, sp for 0)

inline constexpr uint32_t kMrsX0Nzcv = 0xd53b4200;  // mrs x0, nzcv
inline constexpr uint32_t kMsrNzcvX0 = 0xd51b4200;  // msr nzcv, x0
inline constexpr uint32_t kXpaclri = 0xd50320ff;    // xpaclri: strips x30's PAC (a NOP without FEAT_PAuth)
inline constexpr uint32_t kNop = 0xd503201f;

// Little-endian bytes of `word` appended to `out`.
void append(std::vector<uint8_t>& out, uint32_t word);

}  // namespace xprobe::arch::arm64::a64
