#pragma once
// Parsed place ("libc.so.6:open+4", "str*", "/bin/x:0x1234", "0x7f..") -> the runtime
// addresses to plant, each already proven safe by the architecture's checker.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/probe_point_check.h"
#include "probe/definition.h"
#include "probe/resolve/module_map.h"
#include "support/result.h"

namespace xprobe::probe {

struct ResolvedPoint {
  std::string module_path;
  std::string function;            // the function symbol that covers the point ("" for an FDE)
  std::string function_proof;      // what delimits that function: "symbol NAME", ".eh_frame FDE ..."
  // The place named an IFUNC symbol: this point is its resolver until the session moves it
  // to the implementation the dynamic linker chose (ifunc_choice.h).
  std::optional<elf::Symbol> ifunc;
  uint64_t function_address = 0;   // runtime address of the function's start
  uint64_t address = 0;            // runtime address to plant
  uint64_t file_offset = 0;        // of `address` in module_path (uprobe_events' notation)
  std::string event;               // event name (derived for globs and unnamed probes)
  arch::CheckOutcome check;        // the safety checker's answer (accepted or why not)
};

struct PlaceResolution {
  // The object the place names is not mapped yet (a library dlopen will load): wait for it.
  bool waiting_for_module = false;
  std::vector<ResolvedPoint> points;
};

// Resolves one definition's place against the process's modules. Errors name the problem
// (no such symbol, address outside any object, ...). A refused probe point is not an error
// here: the caller reports check.message() and decides.
Result<PlaceResolution> resolve_place(const ProbeDefinition& definition, const ModuleMap& modules);

// Address of a data (or function) symbol for @SYM fetch arguments, searched in the module
// the probe is in, then in every module.
Result<uint64_t> resolve_data_symbol(const std::string& symbol, int64_t offset, const ModuleMap& modules,
                                     const std::string& preferred_module);

}  // namespace xprobe::probe
