#include "trace/value_format.h"

#include <fmt/format.h>

namespace xprobe::trace {
namespace {

std::string symbol_text(uint64_t address, const Symbolizer& symbolizer) {
  if (symbolizer) {
    if (auto name = symbolizer(address)) return *name;
  }
  return fmt::format("0x{:x}", address);
}

}  // namespace

int64_t sign_extend(uint64_t raw, unsigned size) {
  if (size >= 8) return static_cast<int64_t>(raw);
  const unsigned shift = 64 - size * 8;
  return static_cast<int64_t>(raw << shift) >> shift;
}

std::string format_number(uint64_t raw, const probe::FetchType& type, const Symbolizer& symbolizer) {
  using probe::TypeKind;
  switch (type.kind) {
    case TypeKind::Unsigned:
    case TypeKind::Bitfield: return fmt::format("{}", raw);
    case TypeKind::Signed: return fmt::format("{}", sign_extend(raw, type.size));
    case TypeKind::Hex: return fmt::format("0x{:x}", raw);
    case TypeKind::Char: return fmt::format("'{}'", static_cast<char>(raw));
    case TypeKind::Symbol: return symbol_text(raw, symbolizer);
    case TypeKind::SymStr: return fmt::format("\"{}\"", symbol_text(raw, symbolizer));
    case TypeKind::String:
    case TypeKind::UString: break;
  }
  return fmt::format("0x{:x}", raw);
}

std::string format_value(const probe::FetchedValue& value, const Symbolizer& symbolizer) {
  std::vector<std::string> elements;
  if (value.type.is_string()) {
    for (const auto& text : value.strings) elements.push_back(text ? fmt::format("\"{}\"", *text) : "(fault)");
  } else if (value.type.kind == probe::TypeKind::SymStr && value.fault) {
    for (size_t i = 0; i < value.numbers.size(); ++i) elements.emplace_back("(fault)");
  } else {
    for (uint64_t raw : value.numbers) elements.push_back(format_number(raw, value.type, symbolizer));
  }
  if (!value.type.is_array()) return elements.empty() ? std::string("(fault)") : elements.front();
  return fmt::format("{{{}}}", fmt::join(elements, ","));
}

}  // namespace xprobe::trace
