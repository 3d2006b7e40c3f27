#include "probe/definition_text.h"

#include <fmt/format.h>

namespace xprobe::probe {

std::string to_uprobe_events_line(const ProbeDefinition& definition, unsigned word_size) {
  const char type = definition.kind == ProbeKind::Delete ? '-' : definition.kind == ProbeKind::Return ? 'r' : 'p';
  std::string out(1, type);
  if (definition.maxactive) out += fmt::format("{}", *definition.maxactive);
  out += fmt::format(":{}/{}", definition.group, definition.event);
  if (definition.kind == ProbeKind::Delete) return out;
  const ProbePlace& place = definition.place;
  out += ' ';
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
  for (const ProbeArgument& argument : definition.arguments) {
    std::string_view body = argument.text;
    if (argument.name_given) body.remove_prefix(body.find('=') + 1);
    out += fmt::format(" {}={}", argument.name, body);
  }
  return out;
}

}  // namespace xprobe::probe
