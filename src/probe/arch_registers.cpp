#include "probe/arch_registers.h"

#include <array>

namespace xprobe::probe {
namespace {

// x86-64: struct user_regs_struct order (sys/user.h), which is also pt_regs order.
constexpr std::array<std::string_view, 27> kX86_64Order = {
    "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si",
    "di", "orig_ax", "ip", "cs", "flags", "sp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"};

// Spellings the kernel's x86-64 regoffset_table accepts: pt_regs names only, no %rax/%eax.
constexpr std::array<RegisterName, 25> kX86_64Names = {{
    {"r15", 0}, {"r14", 1}, {"r13", 2}, {"r12", 3}, {"bp", 4}, {"bx", 5}, {"r11", 6},
    {"r10", 7}, {"r9", 8}, {"r8", 9}, {"ax", 10}, {"cx", 11}, {"dx", 12}, {"si", 13},
    {"di", 14}, {"orig_ax", 15}, {"ip", 16}, {"cs", 17}, {"flags", 18}, {"sp", 19},
    {"ss", 20}, {"ds", 23}, {"es", 24}, {"fs", 25}, {"gs", 26},
}};

// System V AMD64 ABI: rdi, rsi, rdx, rcx, r8, r9.
constexpr std::array<RegisterId, 6> kX86_64Args = {14, 13, 12, 11, 9, 8};

// i386: the 32-bit struct user_regs_struct order.
constexpr std::array<std::string_view, 17> kI386Order = {
    "bx", "cx", "dx", "si", "di", "bp", "ax", "ds", "es", "fs", "gs", "orig_ax", "ip", "cs",
    "flags", "sp", "ss"};

constexpr std::array<RegisterName, 17> kI386Names = {{
    {"bx", 0}, {"cx", 1}, {"dx", 2}, {"si", 3}, {"di", 4}, {"bp", 5}, {"ax", 6}, {"ds", 7},
    {"es", 8}, {"fs", 9}, {"gs", 10}, {"orig_ax", 11}, {"ip", 12}, {"cs", 13}, {"flags", 14},
    {"sp", 15}, {"ss", 16},
}};

// cdecl: every argument on the stack.
constexpr std::span<const RegisterId> kI386Args{};

// AArch64: struct user_pt_regs: x0..x30, sp, pc, pstate.
constexpr std::array<std::string_view, 34> kArm64Order = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23",
    "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc",  "pstate"};

constexpr std::array<RegisterName, 34> kArm64Names = {{
    {"x0", 0},   {"x1", 1},   {"x2", 2},   {"x3", 3},   {"x4", 4},   {"x5", 5},
    {"x6", 6},   {"x7", 7},   {"x8", 8},   {"x9", 9},   {"x10", 10}, {"x11", 11},
    {"x12", 12}, {"x13", 13}, {"x14", 14}, {"x15", 15}, {"x16", 16}, {"x17", 17},
    {"x18", 18}, {"x19", 19}, {"x20", 20}, {"x21", 21}, {"x22", 22}, {"x23", 23},
    {"x24", 24}, {"x25", 25}, {"x26", 26}, {"x27", 27}, {"x28", 28}, {"x29", 29},
    {"x30", 30}, {"sp", 31},  {"pc", 32},  {"pstate", 33},
}};

// AAPCS64: x0..x7.
constexpr std::array<RegisterId, 8> kArm64Args = {0, 1, 2, 3, 4, 5, 6, 7};

const ArchProbeAbi kX86_64Abi{insn::Arch::X86_64, 8, kX86_64Order, kX86_64Names, kX86_64Args,
                              1, 19, 16, 10, std::nullopt};
const ArchProbeAbi kI386Abi{insn::Arch::I386, 4, kI386Order, kI386Names, kI386Args,
                            1, 15, 12, 6, std::nullopt};
const ArchProbeAbi kArm64Abi{insn::Arch::AArch64, 8, kArm64Order, kArm64Names, kArm64Args,
                             0, 31, 32, 0, RegisterId{30}};

}  // namespace

const ArchProbeAbi& probe_abi(insn::Arch arch) {
  switch (arch) {
    case insn::Arch::X86_64: return kX86_64Abi;
    case insn::Arch::I386: return kI386Abi;
    case insn::Arch::AArch64: return kArm64Abi;
  }
  return kX86_64Abi;
}

std::optional<RegisterId> find_register(const ArchProbeAbi& abi, std::string_view name) {
  for (const RegisterName& entry : abi.names) {
    if (entry.name == name) return entry.id;
  }
  return std::nullopt;
}

std::string_view register_name(const ArchProbeAbi& abi, RegisterId id) {
  if (id < abi.block_order.size()) return abi.block_order[id];
  return "?";
}

}  // namespace xprobe::probe
