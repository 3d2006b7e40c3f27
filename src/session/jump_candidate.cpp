#include "session/jump_candidate.h"

#include <fmt/format.h>

#include "probe/agent_capture.h"

namespace xprobe::session {

namespace {

// The function `function` of `module` as the jump planner reads it: its bytes, the pieces the
// compiler split off it (foo and foo.cold branch into each other; in a stripped object the
// pieces are found from the unwind tables, where its jumps lead), the symbols near `near`.
Result<arch::JumpPatchFunction> patch_function(const probe::LoadedModule& module, const elf::Symbol& function,
                                                    uint64_t near) {
  const elf::ElfFile& file = *module.elf;
  arch::JumpPatchFunction out;
  out.code = {file.function_bytes(function), function.address + module.bias};
  if (function.size == 0 || out.code.bytes.size() != function.size) return make_error("the function's bytes are not all in the file");
  const size_t cold = function.name.find(".cold");
  const std::string base = cold == std::string::npos ? function.name : function.name.substr(0, cold);
  for (const std::string& name : {base, base + ".cold"}) {
    for (const elf::Symbol* part : file.find_symbols(name)) {
      if (part == &function || part->kind != elf::SymbolKind::Function) continue;
      out.split_parts.push_back({file.function_bytes(*part), part->address + module.bias});
    }
  }
  const uint64_t link = near - module.bias;
  for (const elf::Symbol* other : file.symbols_starting_in(link + 1, link + 16))
    out.other_symbols.push_back(other->address + module.bias);
  const Result<elf::ExceptionTables>& indexed = module.elf->exception_tables();
  out.foreign = [file = &file, bias = module.bias, unwind = indexed ? &*indexed : nullptr](uint64_t target) {
    using arch::ForeignCode;
    const uint64_t at = target - bias;
    for (const elf::Symbol* symbol : file->symbols_starting_in(at, at + 1))
      if (symbol->kind == elf::SymbolKind::Function) return arch::ForeignTarget{ForeignCode::FunctionStart, {}};
    for (const elf::Section& section : file->sections())
      if (section.name.find(".plt") != std::string::npos && at >= section.address && at - section.address < section.size)
        return arch::ForeignTarget{ForeignCode::FunctionStart, {}};
    if (const elf::FrameDescription* fde = unwind ? unwind->frame_covering(at) : nullptr) {
      if (auto bytes = file->bytes_at(fde->pc_begin, fde->pc_end - fde->pc_begin))
        return arch::ForeignTarget{ForeignCode::Fragment, {*bytes, fde->pc_begin + bias}};
    }
    return arch::ForeignTarget{};
  };
  return out;
}

}  // namespace

Result<probe::engine::JumpProbeSpec> jump_candidate(const probe::ProbeDefinition& definition,
                                                    const probe::ResolvedPoint& point,
                                                    const probe::ProbeFetchPlan& plan, const probe::ModuleMap& modules) {
  if (definition.kind != probe::ProbeKind::Entry && definition.kind != probe::ProbeKind::Return)
    return make_error("not an entry or return probe");
  if (point.address != point.function_address) return make_error("not at a function's first instruction");
  const probe::LoadedModule* module = modules.find(point.module_path);
  if (!module || !module->elf) return make_error("its object is not loaded");
  const uint64_t link = point.address - module->bias;
  const elf::Symbol* function = module->elf->function_containing(link);
  if (!function || function->address != link || function->size == 0) return make_error("no sized function symbol starts there");
  const bool is_return = definition.kind == probe::ProbeKind::Return;
  auto capture = probe::compile_agent_capture(plan, is_return);
  if (!capture) return capture.error();
  auto code = patch_function(*module, *function, point.address);
  if (!code) return code.error();

  probe::engine::JumpProbeSpec spec;
  spec.address = point.address;
  spec.capture = std::move(*capture);
  spec.function = std::move(*code);
  spec.is_return = is_return;
  spec.max_active = definition.maxactive.value_or(0);
  return spec;
}

Result<arch::JumpPatchFunction> return_site_function(uint64_t address, const probe::ModuleMap& modules) {
  const probe::LoadedModule* module = modules.containing(address);
  if (!module || !module->elf) return make_error(fmt::format("0x{:x} is in no object the process maps", address));
  const uint64_t link = address - module->bias;
  const elf::Symbol* function = module->elf->function_containing(link);
  if (!function) return make_error(fmt::format("0x{:x} is in no function symbol", address));
  auto code = patch_function(*module, *function, address);
  if (!code) return code.error();
  const Result<elf::ExceptionTables>& indexed = module->elf->exception_tables();
  if (!indexed) return make_error(fmt::format("its exception tables: {}", indexed.error().message));
  // A jump and its displaced instructions span at most 5 + 14 bytes past the site.
  auto pads = indexed->landing_pads_in(link, link + 20);
  if (!pads) return make_error(fmt::format("its exception tables: {}", pads.error().message));
  for (uint64_t pad : *pads) code->landing_pads.push_back(pad + module->bias);
  return code;
}

}  // namespace xprobe::session
