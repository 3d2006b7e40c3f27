#include "trace/value_format.h"

#include "trace/number_text.h"

namespace xprobe::trace {
namespace {

void append_symbol(std::string& out, uint64_t address, const Symbolizer& symbolizer) {
  if (symbolizer) {
    if (auto name = symbolizer(address)) {
      out += *name;
      return;
    }
  }
  append_hex(out, address);
}

}  // namespace

int64_t sign_extend(uint64_t raw, unsigned size) {
  if (size >= 8) return static_cast<int64_t>(raw);
  const unsigned shift = 64 - size * 8;
  return static_cast<int64_t>(raw << shift) >> shift;
}

void append_number(std::string& out, uint64_t raw, const probe::FetchType& type, const Symbolizer& symbolizer) {
  using probe::TextStyle;
  switch (type.traits().text) {
    case TextStyle::Decimal: append_decimal(out, raw); return;
    case TextStyle::SignedDecimal: append_decimal(out, sign_extend(raw, type.size)); return;
    case TextStyle::Character:
      out += '\'';
      out += static_cast<char>(raw);
      out += '\'';
      return;
    case TextStyle::Symbol: append_symbol(out, raw, symbolizer); return;
    case TextStyle::Hex:
    case TextStyle::QuotedString: break;  // a string's address, where one is printed as a number
  }
  append_hex(out, raw);
}

std::string format_number(uint64_t raw, const probe::FetchType& type, const Symbolizer& symbolizer) {
  std::string out;
  append_number(out, raw, type, symbolizer);
  return out;
}

void append_value(std::string& out, const probe::FetchedValue& value, const Symbolizer& symbolizer) {
  const bool array = value.type.is_array();
  const bool is_string = value.type.is_string();
  const size_t count = value.element_count();
  if (count == 0) {
    out += "(fault)";
    return;
  }
  if (array) out += '{';
  for (size_t i = 0; i < count; ++i) {
    if (i != 0) out += ',';
    if (is_string) {
      const auto& text = value.strings[i];
      if (text) {
        out += '"';
        out += *text;
        out += '"';
      } else {
        out += "(fault)";
      }
    } else {
      append_number(out, value.numbers[i], value.type, symbolizer);
    }
  }
  if (array) out += '}';
}

std::string format_value(const probe::FetchedValue& value, const Symbolizer& symbolizer) {
  std::string out;
  append_value(out, value, symbolizer);
  return out;
}

}  // namespace xprobe::trace
