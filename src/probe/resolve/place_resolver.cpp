#include "probe/resolve/place_resolver.h"

#include <fmt/format.h>

#include "elf/code_range.h"
#include "source/covering_function.h"

namespace xprobe::probe {
namespace {

// Every probe point is decoded from the start of the function that covers it.
Result<ResolvedPoint> check_point(const LoadedModule& module, const elf::CodeRange& range, uint64_t link_address,
                                  const ProbeDefinition& definition) {
  const elf::Symbol& function = range.function;
  const elf::ElfFile& file = *module.elf;
  ResolvedPoint point;
  point.module_path = module.path;
  point.function = function.name;
  point.function_proof = range.proof_text();
  point.function_address = function.address + module.bias;
  point.address = link_address + module.bias;
  point.file_offset = file.address_to_file_offset(link_address).value_or(0);
  point.event = definition.event_given || !definition.place.is_glob
                    ? (definition.event.empty() ? derive_event_name(definition.place, definition.kind, function.name)
                                                : definition.event)
                    : derive_event_name(definition.place, definition.kind, function.name);
  const auto bytes = file.function_bytes(function);
  point.check = arch::check_probe_point(file.arch(), bytes, point.function_address, point.address);
  if (definition.kind == ProbeKind::Return && link_address != function.address)
    return make_error(fmt::format("'{}': a return probe must be at the entry of a function ({} starts at {:#x}, this is +{:#x})",
                                  definition.place.text, function.name, point.function_address,
                                  link_address - function.address));
  return point;
}

}  // namespace

Result<PlaceResolution> resolve_place(const ProbeDefinition& definition, const ModuleMap& modules) {
  const ProbePlace& place = definition.place;
  PlaceResolution resolution;

  if (place.kind == ProbePlace::Kind::VirtualAddress) {
    const LoadedModule* module = modules.containing(place.address);
    if (module == nullptr)
      return make_error(fmt::format("'{}': address {:#x} is not inside any mapped object", place.text, place.address));
    const uint64_t link_address = place.address - module->bias;
    const auto range = elf::code_range_containing(*module->elf, link_address);
    if (!range)
      return make_error(fmt::format("'{}': no function symbol or .eh_frame FDE of {} covers {:#x}, so its instruction "
                                    "boundaries cannot be proven",
                                    place.text, module->path, place.address));
    auto point = check_point(*module, *range, link_address, definition);
    if (!point) return point.error();
    resolution.points.push_back(std::move(point.value()));
    return resolution;
  }

  const LoadedModule* module = place.binary.empty() ? modules.main_executable() : modules.find(place.binary);
  if (module == nullptr) {
    if (place.binary.empty()) return make_error("the main executable is not mapped in the process");
    resolution.waiting_for_module = true;
    return resolution;
  }
  const elf::ElfFile& file = *module->elf;

  if (place.kind == ProbePlace::Kind::FileOffset) {
    auto link_address = file.file_offset_to_address(place.address);
    if (!link_address)
      return make_error(fmt::format("'{}': file offset {:#x} is not inside a loadable segment of {}", place.text,
                                    place.address, module->path));
    // Stripped code has no symbol, but an SDT marker's pc, a function of its separate debug
    // information, or (most stripped objects keep it) its .eh_frame FDE delimits a function,
    // enough to walk instruction boundaries from its start.
    std::optional<elf::CodeRange> range = elf::code_range_containing(file, *link_address);
    if (!range || range->proof == elf::CodeRange::Proof::FrameDescription) {
      if (auto from_debug_info = source::covering_function(file, *link_address)) {
        range = elf::CodeRange{*from_debug_info, elf::CodeRange::Proof::Symbol};
      }
    }
    if (!range)
      return make_error(fmt::format("'{}': no function symbol or .eh_frame FDE of {} covers offset {:#x}, so its "
                                    "instruction boundaries cannot be proven",
                                    place.text, module->path, place.address));
    auto point = check_point(*module, *range, *link_address, definition);
    if (!point) return point.error();
    resolution.points.push_back(std::move(point.value()));
    return resolution;
  }

  for (const elf::Symbol* symbol : file.find_symbols(place.symbol)) {
    if (symbol->kind != elf::SymbolKind::Function) continue;
    // Aliases (open/__open/__libc_open) share an address: probe it once.
    bool duplicate = false;
    for (const ResolvedPoint& existing : resolution.points)
      duplicate |= existing.function_address == symbol->address + module->bias;
    if (duplicate) continue;
    const uint64_t link_address = symbol->address + static_cast<uint64_t>(place.offset);
    if (place.offset < 0 || (symbol->size != 0 && static_cast<uint64_t>(place.offset) >= symbol->size))
      return make_error(fmt::format("'{}': offset {:+#x} is outside {} ({} bytes)", place.text, place.offset,
                                    symbol->name, symbol->size));
    auto point = check_point(*module, elf::CodeRange{*symbol, elf::CodeRange::Proof::Symbol}, link_address, definition);
    if (!point) return point.error();
    if (symbol->ifunc && place.offset == 0) point->ifunc = *symbol;
    resolution.points.push_back(std::move(point.value()));
  }
  if (resolution.points.empty())
    return make_error(fmt::format("'{}': no function {} '{}' in {}", place.text, place.is_glob ? "matches" : "named",
                                  place.symbol, module->path));
  return resolution;
}

Result<uint64_t> resolve_data_symbol(const std::string& symbol, int64_t offset, const ModuleMap& modules,
                                     const std::string& preferred_module) {
  auto search = [&](const LoadedModule& module) -> std::optional<uint64_t> {
    for (const elf::Symbol* candidate : module.elf->find_symbols(symbol))
      return candidate->address + module.bias + static_cast<uint64_t>(offset);
    return std::nullopt;
  };
  if (const LoadedModule* module = modules.find(preferred_module))
    if (auto address = search(*module)) return *address;
  for (const LoadedModule& module : modules.modules())
    if (auto address = search(module)) return *address;
  return make_error(fmt::format("@{}: no such symbol in any object of the process", symbol));
}

}  // namespace xprobe::probe
