#include "arch/x86/x86_source_registers.h"

#include <array>
#include <cstdlib>
#include <fmt/format.h>

#include "support/number_text.h"

namespace xprobe::arch::x86 {
namespace {

// x86-64 psABI, "DWARF Register Number Mapping": 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi,
// 6 rbp, 7 rsp, 8..15 r8..r15, 16 the return address (rip).
constexpr std::array<std::string_view, 17> kX86_64Dwarf = {"ax", "dx", "cx", "bx", "si",  "di",  "bp",  "sp", "r8",
                                                           "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ip"};
// i386 psABI: 0 eax, 1 ecx, 2 edx, 3 ebx, 4 esp, 5 ebp, 6 esi, 7 edi, 8 eip.
constexpr std::array<std::string_view, 9> kI386Dwarf = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "ip"};

struct Spelling {
  std::string_view text;
  std::string_view name;
  unsigned bytes;
};

// The legacy registers in their 8/4/2/1-byte spellings.
constexpr std::array<Spelling, 40> kLegacy = {{
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

constexpr std::array<std::string_view, 8> kHigh = {"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};

// The kernel's name of an assembler spelling without its '%' ("edi" → "di", "r12d" → "r12").
std::optional<std::string_view> register_of_spelling(std::string_view spelling) {
  for (const Spelling& legacy : kLegacy)
    if (legacy.text == spelling) return legacy.name;
  for (std::string_view high : kHigh) {
    if (spelling.substr(0, high.size()) != high) continue;
    const std::string_view suffix = spelling.substr(high.size());
    if (suffix.empty() || suffix == "d" || suffix == "w" || suffix == "b" || suffix == "l") return high;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> dwarf_register_name(unsigned number, bool is_64bit) {
  if (is_64bit) return number < kX86_64Dwarf.size() ? std::optional(kX86_64Dwarf[number]) : std::nullopt;
  return number < kI386Dwarf.size() ? std::optional(kI386Dwarf[number]) : std::nullopt;
}

Result<std::string> sdt_operand_fetcharg(std::string_view operand) {
  if (operand.starts_with("$")) {
    auto constant = parse_signed_decimal_or_hex(operand.substr(1));
    if (!constant) return make_error("an immediate that is not a number");
    return fmt::format("\\{}", *constant);
  }
  if (operand.starts_with("%")) {
    auto name = register_of_spelling(operand.substr(1));
    if (!name) return make_error(fmt::format("unknown register '{}'", operand));
    return fmt::format("%{}", *name);
  }
  const size_t open = operand.find('(');
  if (open == std::string_view::npos || operand.back() != ')') return make_error("an operand xprobe cannot read");
  const std::string_view displacement = operand.substr(0, open);
  const std::string_view inside = operand.substr(open + 1, operand.size() - open - 2);
  if (inside.find(',') != std::string_view::npos)
    return make_error("an index register ((base,index,scale)), which fetch arguments cannot express");
  if (!inside.starts_with("%")) return make_error("a memory operand without a base register");
  auto name = register_of_spelling(inside.substr(1));
  if (!name) return make_error(fmt::format("unknown register '{}'", inside));
  if (*name == "ip") return make_error("a %rip-relative operand (a global), which needs the symbol's address");
  int64_t offset = 0;
  if (!displacement.empty()) {
    auto parsed = parse_signed_decimal_or_hex(displacement);
    if (!parsed) return make_error(fmt::format("a displacement '{}' that is not a number", displacement));
    offset = *parsed;
  }
  return fmt::format("{}{}(%{})", offset < 0 ? "-" : "+", std::abs(offset), *name);
}

}  // namespace xprobe::arch::x86
