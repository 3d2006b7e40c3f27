// The share of an arm64 object's instruction boundaries that the checker accepts, and how the
// trap engine gets past those: simulated, run out of line, or refused by the execution plan
// (issue 12, section 4). Every 4-byte boundary of every function is checked as a probe point,
// the functions being the function symbols (aliases counted once; a stripped library has its
// exported ones only) and then, for all code with unwind information, those plus every FDE's
// range in .eh_frame (internal functions too); refusals are counted by the reason's first words.
// The jump engine's share: the function entries and return sites (the instruction after a
// BL/BLR) its planner accepts (arch/arm64/probe_support/jump_patch.h), given each function's
// bytes and the other functions' starts as the places its jumps may leave for.
//
// usage: arm64_probe_paths FILE...
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "arch/arm64/probe_support/execution_plan.h"
#include "arch/arm64/probe_support/jump_patch.h"
#include "arch/probe_point_check.h"
#include "elf/elf_file.h"
#include "elf/exception_tables.h"
#include "insn/arm64/arm64_insn.h"

namespace {

using namespace xprobe;

std::string reason_head(const std::string& reason) {
  const auto cut = reason.find_first_of(":(,");
  return reason.substr(0, cut == std::string::npos ? 60 : std::min<size_t>(cut, 60));
}

double percent(uint64_t part, uint64_t whole) { return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole); }

struct Counts {
  uint64_t functions = 0, boundaries = 0, accepted = 0, simulated = 0, out_of_line = 0, plan_refused = 0;
  uint64_t entry_jumps = 0, return_sites = 0, return_site_jumps = 0;
  std::map<std::string, uint64_t> checker_refusals, plan_refusals, jump_refusals;
};

// `ranges`: function start -> end (exclusive), link-time addresses.
Counts classify(const elf::ElfFile& elf, const std::map<uint64_t, uint64_t>& ranges) {
  Counts counts;
  for (const auto& [start, end] : ranges) {
    const auto found = elf.bytes_at(start, end - start);
    if (!found || found->size() < 4) continue;
    const std::span<const uint8_t> bytes = *found;
    ++counts.functions;
    arch::JumpPatchFunction function;
    function.code = arch::CodeRange{bytes.subspan(0, bytes.size() & ~size_t{3}), start};
    function.foreign = [&](uint64_t target) {
      return arch::ForeignTarget{ranges.count(target) ? arch::ForeignCode::FunctionStart : arch::ForeignCode::Unknown, {}};
    };
    auto count_jump = [&](uint64_t address, arch::JumpPatchPlace place, uint64_t& accepted) {
      auto jump = arch::arm64::plan_jump_patch(function, address, place);
      if (jump) ++accepted;
      else {
        const std::string& why = jump.error().message;  // "displaced instruction at 0x...: REASON"
        const auto colon = why.find(": ");
        ++counts.jump_refusals[reason_head(colon == std::string::npos ? why : why.substr(colon + 2))];
      }
    };
    count_jump(start, arch::JumpPatchPlace::FunctionEntry, counts.entry_jumps);
    for (uint64_t offset = 4; offset + 4 <= bytes.size(); offset += 4) {
      const auto before = insn::arm64::decode(bytes.subspan(offset - 4, 4), start + offset - 4).value();
      if (before.cls != insn::arm64::InsnClass::Bl && before.cls != insn::arm64::InsnClass::Blr) continue;
      ++counts.return_sites;
      count_jump(start + offset, arch::JumpPatchPlace::ReturnSite, counts.return_site_jumps);
    }
    for (uint64_t offset = 0; offset + 4 <= bytes.size(); offset += 4) {
      ++counts.boundaries;
      const uint64_t address = start + offset;
      const auto check = arch::check_probe_point(insn::Arch::AArch64, bytes, start, address);
      if (!check.accepted()) {
        ++counts.checker_refusals[check.verdict == arch::Verdict::UnknownInstruction ? std::string("unknown instruction")
                                                                                     : reason_head(check.reason)];
        continue;
      }
      ++counts.accepted;
      const auto plan = arch::arm64::plan_execution(insn::arm64::decode(bytes.subspan(offset, 4), address).value());
      switch (plan.path) {
        case arch::arm64::ExecutionPath::Simulate: ++counts.simulated; break;
        case arch::arm64::ExecutionPath::OutOfLine: ++counts.out_of_line; break;
        case arch::arm64::ExecutionPath::Refused:
          ++counts.plan_refused;
          ++counts.plan_refusals[reason_head(plan.reason)];
          break;
      }
    }
  }
  return counts;
}

void print(const std::string& what, const Counts& c) {
  auto line = [&](const char* label, uint64_t n) {
    std::printf("  %-26s %9llu  %6.2f%%\n", label, static_cast<unsigned long long>(n), percent(n, c.boundaries));
  };
  std::printf("%s: %llu functions, %llu instruction boundaries\n", what.c_str(),
              static_cast<unsigned long long>(c.functions), static_cast<unsigned long long>(c.boundaries));
  line("accepted by the checker", c.accepted);
  line("  run out of line", c.out_of_line);
  line("  simulated", c.simulated);
  line("  refused by the plan", c.plan_refused);
  for (const auto& [reason, count] : c.plan_refusals)
    std::printf("        %-58s %llu\n", reason.c_str(), static_cast<unsigned long long>(count));
  line("refused by the checker", c.boundaries - c.accepted);
  for (const auto& [reason, count] : c.checker_refusals)
    std::printf("        %-58s %llu\n", reason.c_str(), static_cast<unsigned long long>(count));
  line("jumps: entries, return sites", c.entry_jumps + c.return_site_jumps);
  std::printf("  function entries that can be jumps  %llu of %llu (%.2f%%)\n", static_cast<unsigned long long>(c.entry_jumps),
              static_cast<unsigned long long>(c.functions), percent(c.entry_jumps, c.functions));
  std::printf("  return sites that can be jumps      %llu of %llu (%.2f%%)\n",
              static_cast<unsigned long long>(c.return_site_jumps), static_cast<unsigned long long>(c.return_sites),
              percent(c.return_site_jumps, c.return_sites));
  for (const auto& [reason, count] : c.jump_refusals)
    std::printf("        %-58s %llu\n", reason.c_str(), static_cast<unsigned long long>(count));
}

int report(const std::string& path) {
  auto elf = elf::ElfFile::open(path);
  if (!elf) {
    std::fprintf(stderr, "arm64_probe_paths: %s\n", elf.error().message.c_str());
    return 1;
  }
  if (elf->arch() != insn::Arch::AArch64) {
    std::fprintf(stderr, "arm64_probe_paths: %s is not an AArch64 object\n", path.c_str());
    return 1;
  }
  std::map<uint64_t, uint64_t> symbols;
  for (const elf::Symbol& symbol : elf->symbols()) {
    if (symbol.kind != elf::SymbolKind::Function) continue;
    const auto bytes = elf->function_bytes(symbol);
    if (!bytes.empty()) symbols.emplace(symbol.address, symbol.address + bytes.size());
  }
  print(path + " (function symbols)", classify(*elf, symbols));
  auto tables = elf::ExceptionTables::index(*elf);
  if (!tables) {
    std::fprintf(stderr, "arm64_probe_paths: %s: %s\n", path.c_str(), tables.error().message.c_str());
    return 1;
  }
  std::map<uint64_t, uint64_t> all = symbols;
  for (const elf::FrameDescription& frame : tables->frames()) all[frame.pc_begin] = frame.pc_end;
  // Overlaps (a symbol inside an FDE's range) would count boundaries twice: keep the outer one.
  uint64_t covered_to = 0;
  for (auto it = all.begin(); it != all.end();) {
    if (it->first < covered_to) {
      it = all.erase(it);
      continue;
    }
    covered_to = it->second;
    ++it;
  }
  print(path + " (function symbols and .eh_frame ranges)", classify(*elf, all));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: arm64_probe_paths FILE...\n");
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) status |= report(argv[i]);
  return status;
}
