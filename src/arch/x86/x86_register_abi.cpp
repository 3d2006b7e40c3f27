#include "arch/x86/x86_register_abi.h"

#include <array>

namespace xprobe::arch::x86 {
namespace {

// x86-64: struct user_regs_struct order (sys/user.h), which is also pt_regs order; the
// probe language's rN is word N (so r8 is %r9, r14 is %di, r16 is %ip).
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

const RegisterAbi kX86_64Abi{insn::Arch::X86_64, 8, kX86_64Order, kX86_64Names, kX86_64Args,
                             1, 19, 16, 10, std::nullopt};
const RegisterAbi kI386Abi{insn::Arch::I386, 4, kI386Order, kI386Names, kI386Args,
                           1, 15, 12, 6, std::nullopt};

}  // namespace

const RegisterAbi& x86_64_register_abi() { return kX86_64Abi; }
const RegisterAbi& i386_register_abi() { return kI386Abi; }

}  // namespace xprobe::arch::x86
