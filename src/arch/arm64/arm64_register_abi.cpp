#include "arch/arm64/arm64_register_abi.h"

#include <array>

namespace xprobe::arch::arm64 {
namespace {

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

const RegisterAbi kArm64Abi{insn::Arch::AArch64, 8, kArm64Order, kArm64Names, kArm64Args,
                            0, 31, 32, 0, RegisterId{30}};

}  // namespace

const RegisterAbi& arm64_register_abi() { return kArm64Abi; }

}  // namespace xprobe::arch::arm64
