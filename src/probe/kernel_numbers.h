#pragma once
// Numbers and names as the kernel's probe parser reads them (kstrtoull, kstrtoll,
// simple_strtoul with base 0; C-identifier names), shared by the definition grammar and the
// fetcharg grammar so both accept exactly what the kernel accepts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace xprobe::probe {

// A C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_good_name(std::string_view name);
bool all_digits(std::string_view text);

// Like the kernel's kstrtoull(s, 0): the whole text, 0x hex, leading 0 octal, else decimal;
// one leading '+' only where `allow_plus` (the kernel's public kstrtoull allows it).
std::optional<uint64_t> parse_unsigned(std::string_view text, bool allow_plus = true);
// Like the kernel's kstrtoll(s, 0): "-N", "+N" or "N"; no sign after a '-'.
std::optional<int64_t> parse_signed(std::string_view text);
// "-N" read as kstrtoll would read it ("-" followed by `magnitude`): the kernel keeps the '-'
// of a "-OFFS(" dereference as part of its number.
std::optional<int64_t> parse_negated(std::string_view magnitude);
// Decimal digits only (callers checked all_digits), nullopt on overflow.
std::optional<uint64_t> parse_unsigned_decimal(std::string_view digits);
// Like simple_strtoul(s, &end, 0): as many digits as there are; `consumed` tells how many
// characters were used. Saturates at 2^40 instead of overflowing (callers accept <= 64).
uint64_t parse_prefix_unsigned(std::string_view text, size_t& consumed);

}  // namespace xprobe::probe
