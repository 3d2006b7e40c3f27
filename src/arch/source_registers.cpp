#include "arch/source_registers.h"

#include <array>
#include <charconv>

namespace xprobe::arch {
namespace {

// x86-64 psABI, "DWARF Register Number Mapping": 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi,
// 6 rbp, 7 rsp, 8..15 r8..r15, 16 the return address (rip).
constexpr std::array<std::string_view, 17> kX86_64Dwarf = {"ax", "dx", "cx", "bx", "si",  "di",  "bp",  "sp", "r8",
                                                           "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ip"};
// i386 psABI: 0 eax, 1 ecx, 2 edx, 3 ebx, 4 esp, 5 ebp, 6 esi, 7 edi, 8 eip.
constexpr std::array<std::string_view, 9> kI386Dwarf = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "ip"};
// AArch64 DWARF: 0..30 x0..x30, 31 sp.
constexpr std::array<std::string_view, 32> kArm64Dwarf = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11", "x12", "x13", "x14", "x15",
    "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp"};

struct Spelling {
  std::string_view text;
  std::string_view name;
  unsigned bytes;
};

// The legacy x86 registers in their 8/4/2/1-byte spellings.
constexpr std::array<Spelling, 40> kX86Legacy = {{
    {"rax", "ax", 8}, {"eax", "ax", 4}, {"ax", "ax", 2}, {"al", "ax", 1},
    {"rbx", "bx", 8}, {"ebx", "bx", 4}, {"bx", "bx", 2}, {"bl", "bx", 1},
    {"rcx", "cx", 8}, {"ecx", "cx", 4}, {"cx", "cx", 2}, {"cl", "cx", 1},
    {"rdx", "dx", 8}, {"edx", "dx", 4}, {"dx", "dx", 2}, {"dl", "dx", 1},
    {"rsi", "si", 8}, {"esi", "si", 4}, {"si", "si", 2}, {"sil", "si", 1},
    {"rdi", "di", 8}, {"edi", "di", 4}, {"di", "di", 2}, {"dil", "di", 1},
    {"rbp", "bp", 8}, {"ebp", "bp", 4}, {"bp", "bp", 2}, {"bpl", "bp", 1},
    {"rsp", "sp", 8}, {"esp", "sp", 4}, {"sp", "sp", 2}, {"spl", "sp", 1},
    {"rip", "ip", 8}, {"eip", "ip", 4}, {"ip", "ip", 2}, {"ah", "ax", 1},
    {"bh", "bx", 1},  {"ch", "cx", 1},  {"dh", "dx", 1}, {"flags", "flags", 8},
}};

constexpr std::array<std::string_view, 8> kX86High = {"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};

}  // namespace

std::optional<std::string_view> dwarf_register_name(insn::Arch arch, unsigned number) {
  switch (arch) {
    case insn::Arch::X86_64:
      if (number < kX86_64Dwarf.size()) return kX86_64Dwarf[number];
      return std::nullopt;
    case insn::Arch::I386:
      if (number < kI386Dwarf.size()) return kI386Dwarf[number];
      return std::nullopt;
    case insn::Arch::AArch64:
      if (number < kArm64Dwarf.size()) return kArm64Dwarf[number];
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<OperandRegister> assembler_register(insn::Arch arch, std::string_view spelling) {
  if (arch == insn::Arch::AArch64) {
    if (spelling == "sp") return OperandRegister{"sp", 8};
    if (spelling.size() < 2 || (spelling[0] != 'x' && spelling[0] != 'w')) return std::nullopt;
    unsigned number = 0;
    const auto digits = spelling.substr(1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (ec != std::errc{} || end != digits.data() + digits.size() || number > 30) return std::nullopt;
    return OperandRegister{kArm64Dwarf[number], spelling[0] == 'x' ? 8u : 4u};
  }
  for (const Spelling& legacy : kX86Legacy)
    if (legacy.text == spelling) return OperandRegister{legacy.name, arch == insn::Arch::I386 && legacy.bytes == 8 ? 4u : legacy.bytes};
  // r8..r15 with their b/w/d suffixes.
  for (std::string_view high : kX86High) {
    if (spelling.substr(0, high.size()) != high) continue;
    const std::string_view suffix = spelling.substr(high.size());
    if (suffix.empty()) return OperandRegister{high, 8};
    if (suffix == "d") return OperandRegister{high, 4};
    if (suffix == "w") return OperandRegister{high, 2};
    if (suffix == "b" || suffix == "l") return OperandRegister{high, 1};
  }
  return std::nullopt;
}

}  // namespace xprobe::arch
