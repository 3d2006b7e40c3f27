#include "elf/function_location.h"
#include "support/number_text.h"


#include <fmt/format.h>

#include "elf/code_range.h"

namespace xprobe::elf {
Result<FunctionLocation> locate_in_function(const ElfFile& file, std::string_view spec) {
  FunctionLocation location;
  if (auto address = parse_decimal_or_hex(spec)) {
    // Stripped code: the .eh_frame FDE around the address delimits its function.
    const auto range = code_range_containing(file, *address);
    if (!range) {
      return make_error(fmt::format("{}: no function symbol or .eh_frame FDE contains address {:#x}", file.path(), *address));
    }
    location.function_name = range->proof == CodeRange::Proof::Symbol ? range->function.name : range->proof_text();
    location.function_start = range->function.address;
    location.function_bytes = file.function_bytes(range->function);
    location.address = *address;
    return location;
  }
  std::string_view name = spec;
  int64_t offset = 0;
  if (const size_t sign = spec.find_last_of("+-"); sign != std::string_view::npos && sign > 0) {
    auto magnitude = parse_decimal_or_hex(spec.substr(sign + 1));
    if (!magnitude) return make_error(fmt::format("'{}': bad offset after '{}'", spec, spec[sign]));
    offset = spec[sign] == '+' ? static_cast<int64_t>(*magnitude) : -static_cast<int64_t>(*magnitude);
    name = spec.substr(0, sign);
  }
  const Symbol* function = nullptr;
  for (const Symbol* candidate : file.find_symbols(name))
    if (candidate->kind == elf::SymbolKind::Function) {
      function = candidate;
      break;
    }
  if (function == nullptr) return make_error(fmt::format("{}: no function named '{}'", file.path(), name));
  location.function_name = function->name;
  location.function_start = function->address;
  location.function_bytes = file.function_bytes(*function);
  location.address = function->address + static_cast<uint64_t>(offset);
  return location;
}

}  // namespace xprobe::elf
