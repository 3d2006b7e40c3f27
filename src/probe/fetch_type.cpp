#include "probe/fetch_type.h"

#include <fmt/format.h>

namespace xprobe::probe {

std::string FetchType::name() const {
  std::string base;
  const unsigned bits = size * 8u;
  switch (kind) {
    case TypeKind::Unsigned: base = fmt::format("u{}", bits); break;
    case TypeKind::Signed: base = fmt::format("s{}", bits); break;
    case TypeKind::Hex: base = fmt::format("x{}", bits); break;
    case TypeKind::Char: base = "char"; break;
    case TypeKind::String: base = "string"; break;
    case TypeKind::UString: base = "ustring"; break;
    case TypeKind::Symbol: base = "symbol"; break;
    case TypeKind::SymStr: base = "symstr"; break;
    case TypeKind::Bitfield: base = fmt::format("b{}@{}/{}", bit_width, bit_offset, bits); break;
  }
  if (array_count != 0) base += fmt::format("[{}]", array_count);
  return base;
}

FetchType default_fetch_type(unsigned word_size) {
  FetchType type;
  type.kind = TypeKind::Hex;
  type.size = static_cast<uint8_t>(word_size);
  return type;
}

}  // namespace xprobe::probe
