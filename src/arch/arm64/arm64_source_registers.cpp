#include "arch/arm64/arm64_source_registers.h"

#include <array>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>

#include "support/number_text.h"

namespace xprobe::arch::arm64 {
namespace {

// AArch64 DWARF: 0..30 x0..x30, 31 sp.
constexpr std::array<std::string_view, 32> kDwarf = {
    "x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10", "x11", "x12", "x13", "x14", "x15",
    "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp"};

// "x3"/"w3" → "x3" (a w register reads the low half of the same x register), "sp" → "sp".
std::optional<std::string_view> register_of_spelling(std::string_view spelling) {
  if (spelling == "sp") return kDwarf[31];
  if (spelling.size() < 2 || (spelling[0] != 'x' && spelling[0] != 'w')) return std::nullopt;
  unsigned number = 0;
  const auto digits = spelling.substr(1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc{} || end != digits.data() + digits.size() || number > 30) return std::nullopt;
  return kDwarf[number];
}

}  // namespace

std::optional<std::string_view> dwarf_register_name(unsigned number) {
  return number < kDwarf.size() ? std::optional(kDwarf[number]) : std::nullopt;
}

Result<std::string> sdt_operand_fetcharg(std::string_view operand) {
  if (!operand.empty() && operand.front() == '[') {
    if (operand.back() != ']') return make_error("an unclosed '['");
    const std::string_view inner = operand.substr(1, operand.size() - 2);
    const size_t comma = inner.find(',');
    const std::string_view reg = inner.substr(0, comma);
    int64_t offset = 0;
    if (comma != std::string_view::npos) {
      std::string_view number = inner.substr(comma + 1);
      while (!number.empty() && number.front() == ' ') number.remove_prefix(1);
      if (!number.empty() && number.front() == '#') number.remove_prefix(1);
      auto parsed = parse_signed_decimal_or_hex(number);
      if (!parsed) return make_error("an offset that is not a number");
      offset = *parsed;
    }
    auto name = register_of_spelling(reg);
    if (!name) return make_error(fmt::format("unknown register '{}'", reg));
    return fmt::format("{}{}(%{})", offset < 0 ? "-" : "+", std::abs(offset), *name);
  }
  if (auto constant = parse_signed_decimal_or_hex(operand)) return fmt::format("\\{}", *constant);
  auto name = register_of_spelling(operand);
  if (!name) return make_error(fmt::format("unknown register '{}'", operand));
  return fmt::format("%{}", *name);
}

}  // namespace xprobe::arch::arm64
