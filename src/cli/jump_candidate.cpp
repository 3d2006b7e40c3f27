#include "cli/jump_candidate.h"

#include <fmt/format.h>

#include "probe/agent_capture.h"

namespace xprobe::cli {

Result<probe::engine::JumpProbeSpec> jump_candidate(const probe::ProbeDefinition& definition,
                                                    const probe::ResolvedPoint& point,
                                                    const probe::ProbeFetchPlan& plan, const probe::ModuleMap& modules) {
  if (definition.kind != probe::ProbeKind::Entry) return make_error("return probes use breakpoints");
  if (point.address != point.function_address) return make_error("not at a function's first instruction");
  const probe::LoadedModule* module = modules.find(point.module_path);
  if (!module || !module->elf) return make_error("its object is not loaded");
  const elf::ElfFile& file = *module->elf;
  const uint64_t link = point.address - module->bias;
  const elf::Symbol* function = file.function_containing(link);
  if (!function || function->address != link || function->size == 0) return make_error("no sized function symbol starts there");
  auto capture = probe::compile_agent_capture(plan);
  if (!capture) return capture.error();

  probe::engine::JumpProbeSpec spec;
  spec.address = point.address;
  spec.capture = std::move(*capture);
  spec.function.code = {file.function_bytes(*function), point.address};
  if (spec.function.code.bytes.size() != function->size) return make_error("the function's bytes are not all in the file");
  for (const elf::Symbol* part : file.find_symbols(function->name + ".cold")) {
    spec.function.split_parts.push_back({file.function_bytes(*part), part->address + module->bias});
  }
  for (const elf::Symbol* other : file.symbols_starting_in(link + 1, link + 16))
    spec.function.other_symbols.push_back(other->address + module->bias);
  return spec;
}

}  // namespace xprobe::cli
