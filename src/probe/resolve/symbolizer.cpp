#include "probe/resolve/symbolizer.h"

#include <fmt/format.h>

namespace xprobe::probe {

std::optional<std::string> Symbolizer::symbolize(uint64_t address) const {
  const LoadedModule* module = modules_->containing(address);
  if (module == nullptr) return std::nullopt;
  const uint64_t link_address = address - module->bias;
  const elf::Symbol* symbol = module->elf->symbol_containing(link_address);
  if (symbol == nullptr) return std::nullopt;
  // The kernel's %pS form: symbol+offset/size.
  return fmt::format("{}+{:#x}/{:#x}", symbol->name, link_address - symbol->address, symbol->size);
}

}  // namespace xprobe::probe
