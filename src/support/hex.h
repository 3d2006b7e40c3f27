#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xprobe {

// "48 8d 15": lowercase hex pairs separated by single spaces, as xprobe decode and the
// refusal message print them.
std::string format_hex_bytes(std::span<const uint8_t> bytes);

// Parses "48 8d 15 db" (spaces optional, "0x" prefixes allowed); nullopt on a bad digit.
std::optional<std::vector<uint8_t>> parse_hex_bytes(std::string_view text);

}  // namespace xprobe
