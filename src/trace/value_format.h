#pragma once
// Fetched values printed exactly as the kernel's trace_probe print functions print them:
//   u8..u64 "%u"/"%llu", s8..s64 "%d"/"%lld", x8..x64 "0x%x" (no padding), char '%c',
//   string "\"%s\"" or (fault), symbol "%pS" (sym+0xoff/0xsize, or 0x%lx when unknown),
//   bitfields as their unsigned container, arrays {a,b,c}.
// A faulting number was recorded as 0 and prints 0, as in the kernel.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "probe/fetched_value.h"

namespace xprobe::trace {

// Address -> "symbol+0xoff[/0xsize]", or nullopt when no symbol covers it.
using Symbolizer = std::function<std::optional<std::string>(uint64_t address)>;

std::string format_value(const probe::FetchedValue& value, const Symbolizer& symbolizer = {});
// The same, appended to `out` (the formatters build whole lines this way).
void append_value(std::string& out, const probe::FetchedValue& value, const Symbolizer& symbolizer = {});

// One element, for formatters that lay arrays out themselves.
std::string format_number(uint64_t raw, const probe::FetchType& type, const Symbolizer& symbolizer = {});
void append_number(std::string& out, uint64_t raw, const probe::FetchType& type, const Symbolizer& symbolizer = {});
int64_t sign_extend(uint64_t raw, unsigned size);

}  // namespace xprobe::trace
