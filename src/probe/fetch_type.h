#pragma once
// The TYPE of a fetch argument (`:u32`, `:string`, `:b3@4/32`, `:x16[4]`), shared by the
// parser, the fetch programs and the formatters. Everything that differs between types (the
// name, the size, signedness, how the value is stored and how ftrace and JSON print it) is
// one row of one table (kFetchTypes in fetch_type.cpp); code asks FetchType::traits() instead
// of switching on the kind. Adding a type is adding a row.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace xprobe::probe {

enum class TypeKind : uint8_t {
  Unsigned,  // u8..u64
  Signed,    // s8..s64
  Hex,       // x8..x64 (the default type, word sized)
  Char,      // char
  String,    // string: NUL-terminated, read at the address the expression computes
  UString,   // ustring: the same for user memory (identical in user space)
  Symbol,    // symbol: a word printed sym+0xoff/0xsize
  Bitfield,  // b<width>@<offset>/<container>
};

// What one element of the type holds once fetched.
enum class TypeStorage : uint8_t {
  Number,  // an integer of `size` bytes (bitfields: extracted from their container)
  String,  // the NUL-terminated text at the fetched address
};

// How an element prints in ftrace's text (the kernel's print functions in trace_probe.c).
enum class TextStyle : uint8_t {
  Decimal,        // "%u" / "%llu" (u*, bitfields)
  SignedDecimal,  // "%d" / "%lld" (s*)
  Hex,            // "0x%x", no padding (x*)
  Character,      // '%c'
  Symbol,         // "%pS": sym+0xoff/0xsize, or 0x%lx where no symbol covers it
  QuotedString,   // "\"%s\"", or (fault)
};

// How an element appears in a JSON event.
enum class JsonShape : uint8_t {
  Number,  // a JSON number (u*, s*, bitfields)
  String,  // a JSON string of the ftrace text without its quotes (x*, char, symbol, string)
};

struct FetchTypeTraits {
  std::string_view name;  // as written; the integer families and bitfields add their bits
  TypeKind kind;
  uint8_t size;           // bytes of one element; 0: the target's word size
  bool is_signed;
  TypeStorage storage;
  TextStyle text;
  JsonShape json;
};

// Every type, in the kernel's order (probe_fetch_types[]); bitfields are the "b" row. The
// kernel's symstr is not one: its uprobe parser refuses it ("Unknown type is specified").
std::span<const FetchTypeTraits> fetch_type_table();

struct FetchType {
  TypeKind kind = TypeKind::Hex;
  uint8_t size = 8;          // bytes of one element; the container size for bitfields
  uint8_t bit_width = 0;     // Bitfield only
  uint8_t bit_offset = 0;    // Bitfield only
  uint16_t array_count = 0;  // 0: a single value, N: TYPE[N]

  const FetchTypeTraits& traits() const;
  bool is_string() const { return traits().storage == TypeStorage::String; }
  bool is_array() const { return array_count != 0; }
  // The type as written in a definition: "u32", "b3@4/32", "string[2]".
  std::string name() const;
  bool operator==(const FetchType&) const = default;
};

// The type a name (without [N] and not a bitfield) denotes on a target with `word_size`-byte
// words: "u32", "x64", "char", "string", ...; nullopt for an unknown name.
std::optional<FetchType> fetch_type_named(std::string_view name, unsigned word_size);

// The default type of a value in a register or memory word: x64 on 64-bit, x32 on 32-bit.
FetchType default_fetch_type(unsigned word_size);

// The kernel's bounds.
inline constexpr unsigned kMaxArrayLength = 64;     // MAX_ARRAY_LEN
inline constexpr unsigned kMaxStringSize = 4096;    // MAX_STRING_SIZE (PATH_MAX), NUL included
inline constexpr unsigned kMaxArguments = 128;      // MAX_TRACE_ARGS
inline constexpr unsigned kMaxArgumentNameLength = 32;  // MAX_ARG_NAME_LEN
inline constexpr unsigned kMaxEventNameLength = 63;     // MAX_EVENT_NAME_LEN - 1
inline constexpr unsigned kMaxActive = 4096;            // KRETPROBE_MAXACTIVE_MAX

}  // namespace xprobe::probe
