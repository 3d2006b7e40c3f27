#include "probe/resolve/ifunc_choice.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

namespace xprobe::probe {
namespace {

std::optional<uint64_t> read_word(MemoryReader& memory, uint64_t address, unsigned word_size) {
  std::array<uint8_t, 8> bytes{};
  if (!memory.read(address, std::span<uint8_t>(bytes.data(), word_size))) return std::nullopt;
  uint64_t value = 0;
  for (unsigned i = word_size; i > 0; --i) value = (value << 8) | bytes[i - 1];
  return value;
}

bool in_executable_segment(const elf::ElfFile& file, uint64_t link_address) {
  for (const elf::LoadSegment& segment : file.load_segments()) {
    if (segment.executable && link_address >= segment.vaddr && link_address - segment.vaddr < segment.mem_size) return true;
  }
  return false;
}

// What the slot holds, if it is a function start of `module` other than the resolver itself
// (an unrelocated slot holds 0, or the link-time value).
std::optional<IfuncImplementation> implementation_in_slot(const LoadedModule& module, const elf::Symbol& ifunc,
                                                          uint64_t slot, MemoryReader& memory) {
  const unsigned word_size = module.elf->arch() == insn::Arch::I386 ? 4 : 8;
  const auto value = read_word(memory, slot, word_size);
  if (!value || *value < module.bias) return std::nullopt;
  const uint64_t link = *value - module.bias;
  if (link == ifunc.address || !in_executable_segment(*module.elf, link)) return std::nullopt;
  auto range = elf::code_range_containing(*module.elf, link);
  // The dynamic linker's choice is a function's entry: whatever delimits its code must start there.
  if (!range || range->function.address != link) return std::nullopt;
  return IfuncImplementation{*value, link, std::move(*range), slot};
}

}  // namespace

std::optional<IfuncImplementation> chosen_implementation(const LoadedModule& module, const elf::Symbol& ifunc,
                                                         const ModuleMap& modules, MemoryReader& memory) {
  for (const elf::GotSlot& slot : module.elf->got_slots()) {
    if (slot.resolver != ifunc.address || !slot.symbol.empty()) continue;
    if (auto chosen = implementation_in_slot(module, ifunc, slot.address + module.bias, memory)) return chosen;
  }
  for (const LoadedModule& other : modules.modules()) {
    for (const elf::GotSlot& slot : other.elf->got_slots()) {
      if (slot.symbol != ifunc.name) continue;
      if (auto chosen = implementation_in_slot(module, ifunc, slot.address + other.bias, memory)) return chosen;
    }
  }
  return std::nullopt;
}

std::string describe_ifunc_choice(const elf::Symbol& ifunc, const IfuncImplementation& implementation) {
  const std::string& name = implementation.range.function.name;
  return fmt::format("{} -> {:#x}{}", ifunc.name, implementation.address, name.empty() ? "" : " (" + name + ")");
}

}  // namespace xprobe::probe
