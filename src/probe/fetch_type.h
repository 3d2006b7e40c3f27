#pragma once
// The TYPE of a fetch argument (`:u32`, `:string`, `:b3@4/32`, `:x16[4]`), shared by the
// parser, the fetch programs and the formatters.
#include <cstdint>
#include <string>

namespace xprobe::probe {

enum class TypeKind : uint8_t {
  Unsigned,  // u8..u64: printed in decimal
  Signed,    // s8..s64: printed in decimal
  Hex,       // x8..x64: printed 0x-hex (the default type, word sized)
  Char,      // char: printed 'c'
  String,    // string: NUL-terminated, read at the address the expression computes
  UString,   // ustring: the same for user memory (identical in user space)
  Symbol,    // symbol: word-sized value printed sym+0xoff/0xsize
  SymStr,    // symstr: the symbol text of a value, stored as a string
  Bitfield,  // b<width>@<offset>/<container>: printed in decimal
};

struct FetchType {
  TypeKind kind = TypeKind::Hex;
  uint8_t size = 8;          // bytes of one element; the container size for bitfields
  uint8_t bit_width = 0;     // Bitfield only
  uint8_t bit_offset = 0;    // Bitfield only
  uint16_t array_count = 0;  // 0: a single value, N: TYPE[N]

  bool is_string() const { return kind == TypeKind::String || kind == TypeKind::UString; }
  bool is_array() const { return array_count != 0; }
  // The type as written in a definition: "u32", "b3@4/32", "string[2]".
  std::string name() const;
  bool operator==(const FetchType&) const = default;
};

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
