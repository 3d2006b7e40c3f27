#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace xprobe {

// "120", "0x4000": a whole decimal or 0x-hex number, as places, offsets and SDT operands
// write them; nullopt on an empty text, a stray character or an overflow.
std::optional<uint64_t> parse_decimal_or_hex(std::string_view text);

// The same with an optional leading '+' or '-' ("-16" in an SDT operand "8@-16(%rbp)").
std::optional<int64_t> parse_signed_decimal_or_hex(std::string_view text);

}  // namespace xprobe
