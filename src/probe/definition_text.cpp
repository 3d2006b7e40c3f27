#include "probe/definition_text.h"

#include <fmt/format.h>

namespace xprobe::probe {

std::string to_uprobe_events_line(const ProbeDefinition& definition, unsigned word_size) {
  const char type = definition.kind == ProbeKind::Delete ? '-' : definition.kind == ProbeKind::Return ? 'r' : 'p';
  std::string out(1, type);
  // No MAXACTIVE: the kernel's listing of a uprobe never shows one (it ignores it).
  out += fmt::format(":{}/{}", definition.group, definition.event);
  if (definition.kind == ProbeKind::Delete) return out;
  out += ' ' + to_uprobe_events_place(definition.place, word_size);
  for (const ProbeArgument& argument : definition.arguments) out += ' ' + to_uprobe_events_argument(argument);
  return out;
}

std::string to_uprobe_events_place(const ProbePlace& place, unsigned word_size) {
  std::string out;
  switch (place.kind) {
    case ProbePlace::Kind::FileOffset:
      out += fmt::format("{}:0x{:0{}x}", place.binary, place.address, word_size * 2);
      break;
    case ProbePlace::Kind::VirtualAddress: out += fmt::format("0x{:x}", place.address); break;
    case ProbePlace::Kind::Symbol:
      if (!place.binary.empty()) out += place.binary + ":";
      out += place.symbol;
      if (place.offset > 0) out += fmt::format("+0x{:x}", place.offset);
      if (place.offset < 0) out += fmt::format("-0x{:x}", 0 - static_cast<uint64_t>(place.offset));
      break;
  }
  if (place.ref_ctr_offset) out += fmt::format("(0x{:x})", *place.ref_ctr_offset);
  return out;
}

std::string to_uprobe_events_argument(const ProbeArgument& argument) {
  std::string_view body = argument.text;
  if (argument.name_given) body.remove_prefix(body.find('=') + 1);
  return fmt::format("{}={}", argument.name, body);
}

}  // namespace xprobe::probe
