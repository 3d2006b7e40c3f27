#include "source/covering_function.h"

#include <map>
#include <memory>

#include "source/source_definition.h"

namespace xprobe::source {
namespace {

// Objects are read once per process of xprobe (a session resolves the same libraries again
// at every dlopen and exec).
SourceObjects& cache() {
  static SourceObjects objects;
  return objects;
}

}  // namespace

std::optional<elf::Symbol> covering_function(const elf::ElfFile& file, uint64_t link_address) {
  SourceObject& object = cache().get(file.path());
  if (auto markers = object.markers()) {
    for (const SdtMarker& marker : **markers) {
      if (marker.pc != link_address) continue;
      elf::Symbol symbol;
      symbol.name = "sdt_" + marker.provider + ":" + marker.name;
      symbol.address = marker.pc;
      symbol.kind = elf::SymbolKind::Function;
      // Enough bytes for the marker's nop and what follows it, inside its section.
      for (const elf::Section& section : file.sections())
        if (section.executable && section.has_file_bytes && marker.pc >= section.address &&
            marker.pc < section.address + section.size)
          symbol.size = std::min<uint64_t>(64, section.address + section.size - marker.pc);
      if (symbol.size == 0) return std::nullopt;
      return symbol;
    }
  }
  if (auto functions = object.functions()) {
    if (const FunctionInstance* function = (*functions)->outermost_containing(link_address)) {
      for (const AddressRange& range : function->ranges) {
        if (link_address < range.begin || link_address >= range.end) continue;
        elf::Symbol symbol;
        symbol.name = function->linkage_name.empty() ? function->name : function->linkage_name;
        symbol.address = range.begin;
        symbol.size = range.end - range.begin;
        symbol.kind = elf::SymbolKind::Function;
        return symbol;
      }
    }
  }
  return std::nullopt;
}

}  // namespace xprobe::source
