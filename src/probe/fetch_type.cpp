#include "probe/fetch_type.h"

#include <fmt/format.h>

#include <array>

namespace xprobe::probe {
namespace {

using enum TypeKind;
constexpr auto kNumber = TypeStorage::Number;
constexpr auto kText = TypeStorage::String;

constexpr std::array<FetchTypeTraits, 17> kFetchTypes = {{
    // name  kind  size signed storage ftrace text  JSON
    {"u8", Unsigned, 1, false, kNumber, TextStyle::Decimal, JsonShape::Number},
    {"u16", Unsigned, 2, false, kNumber, TextStyle::Decimal, JsonShape::Number},
    {"u32", Unsigned, 4, false, kNumber, TextStyle::Decimal, JsonShape::Number},
    {"u64", Unsigned, 8, false, kNumber, TextStyle::Decimal, JsonShape::Number},
    {"s8", Signed, 1, true, kNumber, TextStyle::SignedDecimal, JsonShape::Number},
    {"s16", Signed, 2, true, kNumber, TextStyle::SignedDecimal, JsonShape::Number},
    {"s32", Signed, 4, true, kNumber, TextStyle::SignedDecimal, JsonShape::Number},
    {"s64", Signed, 8, true, kNumber, TextStyle::SignedDecimal, JsonShape::Number},
    {"x8", Hex, 1, false, kNumber, TextStyle::Hex, JsonShape::String},
    {"x16", Hex, 2, false, kNumber, TextStyle::Hex, JsonShape::String},
    {"x32", Hex, 4, false, kNumber, TextStyle::Hex, JsonShape::String},
    {"x64", Hex, 8, false, kNumber, TextStyle::Hex, JsonShape::String},
    {"char", Char, 1, false, kNumber, TextStyle::Character, JsonShape::String},
    {"string", String, 0, false, kText, TextStyle::QuotedString, JsonShape::String},
    {"ustring", UString, 0, false, kText, TextStyle::QuotedString, JsonShape::String},
    // The kernel refuses symbol on uprobes (it would name kernel symbols); xprobe's names
    // the traced process's symbols, a deliberate extension (README, kernel compatibility).
    {"symbol", Symbol, 0, false, kNumber, TextStyle::Symbol, JsonShape::String},
    // The container's size comes from b<width>@<offset>/<container>.
    {"b", Bitfield, 0, false, kNumber, TextStyle::Decimal, JsonShape::Number},
}};

constexpr std::span<const FetchTypeTraits> kRows(kFetchTypes);

}  // namespace

std::span<const FetchTypeTraits> fetch_type_table() { return kRows; }

namespace {

constexpr size_t row_of(TypeKind kind, unsigned size) {
  size_t fallback = 0;
  for (size_t i = 0; i < kFetchTypes.size(); ++i) {
    if (kFetchTypes[i].kind != kind) continue;
    if (kFetchTypes[i].size == 0 || kFetchTypes[i].size == size) return i;
    fallback = i;
  }
  return fallback;  // an integer kind of an unusual size: its family's last row
}

// traits() runs for every value of every event the formatters print: the rows of the sizes
// a value can have, looked up once at compile time.
constexpr size_t kKinds = static_cast<size_t>(Bitfield) + 1;
constexpr unsigned kLookedUpSizes = 9;  // 0..8 bytes
constexpr auto kRowBySize = [] {
  std::array<std::array<uint8_t, kLookedUpSizes>, kKinds> rows{};
  for (size_t kind = 0; kind < kKinds; ++kind)
    for (unsigned size = 0; size < kLookedUpSizes; ++size)
      rows[kind][size] = static_cast<uint8_t>(row_of(static_cast<TypeKind>(kind), size));
  return rows;
}();

}  // namespace

const FetchTypeTraits& FetchType::traits() const {
  const auto kind_index = static_cast<size_t>(kind);
  if (kind_index < kKinds && size < kLookedUpSizes) return kFetchTypes[kRowBySize[kind_index][size]];
  return kFetchTypes[row_of(kind, size)];
}

std::string FetchType::name() const {
  const FetchTypeTraits& row = traits();
  std::string base;
  if (kind == Bitfield) {
    base = fmt::format("b{}@{}/{}", bit_width, bit_offset, size * 8u);
  } else if (row.size != 0 && row.size != size) {
    base = fmt::format("{}{}", row.name.front(), size * 8u);
  } else {
    base = std::string(row.name);
  }
  if (array_count != 0) base += fmt::format("[{}]", array_count);
  return base;
}

std::optional<FetchType> fetch_type_named(std::string_view name, unsigned word_size) {
  for (const FetchTypeTraits& row : kRows) {
    if (row.kind == Bitfield || row.name != name) continue;
    FetchType type;
    type.kind = row.kind;
    type.size = static_cast<uint8_t>(row.size != 0 ? row.size : word_size);
    return type;
  }
  return std::nullopt;
}

FetchType default_fetch_type(unsigned word_size) {
  FetchType type;
  type.kind = Hex;
  type.size = static_cast<uint8_t>(word_size);
  return type;
}

}  // namespace xprobe::probe
