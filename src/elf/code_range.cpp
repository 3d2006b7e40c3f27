#include "elf/code_range.h"

#include <fmt/format.h>

#include "elf/exception_tables.h"

namespace xprobe::elf {

std::string CodeRange::proof_text() const {
  if (proof == Proof::Symbol) return "symbol " + function.name;
  return fmt::format(".eh_frame FDE {:#x}-{:#x}", function.address, function.address + function.size);
}

std::optional<CodeRange> code_range_containing(const ElfFile& file, uint64_t link_address) {
  if (const Symbol* symbol = file.function_containing(link_address)) return CodeRange{*symbol, CodeRange::Proof::Symbol};
  // A malformed .eh_frame proves nothing: the point stays refused.
  const auto& tables = file.exception_tables();
  if (!tables) return std::nullopt;
  const FrameDescription* frame = tables->frame_covering(link_address);
  if (frame == nullptr || frame->pc_end <= frame->pc_begin) return std::nullopt;
  CodeRange range;
  range.proof = CodeRange::Proof::FrameDescription;
  range.function.address = frame->pc_begin;
  range.function.size = frame->pc_end - frame->pc_begin;
  range.function.kind = SymbolKind::Function;
  return range;
}

}  // namespace xprobe::elf
