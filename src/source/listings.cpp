#include "source/listings.h"

#include <fnmatch.h>

#include <fmt/format.h>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <vector>

#include "source/variable_access.h"

namespace xprobe::source {

Result<std::string> list_functions(SourceObject& object, std::string_view glob) {
  const std::string pattern = glob.empty() ? "*" : std::string(glob);
  std::map<std::string, std::pair<unsigned, unsigned>> counts;  // name -> (out of line, inlined)
  if (auto functions = object.functions()) {
    for (const FunctionInstance& instance : (*functions)->instances()) {
      if (fnmatch(pattern.c_str(), instance.name.c_str(), 0) != 0) continue;
      auto& [out_of_line, inlined] = counts[instance.name];
      (instance.inlined ? inlined : out_of_line) += 1;
    }
  } else {
    auto elf = object.elf();
    if (!elf) return elf.error();
    for (const elf::Symbol& symbol : (*elf)->symbols())
      if (symbol.kind == elf::SymbolKind::Function && fnmatch(pattern.c_str(), symbol.name.c_str(), 0) == 0)
        counts[symbol.name].first += 1;
  }
  std::string out;
  for (const auto& [name, count] : counts) {
    out += name;
    if (count.second != 0) out += fmt::format("  [inlined {}{}]", count.second, count.first == 0 ? ", no out-of-line copy" : "");
    out += '\n';
  }
  return out;
}

Result<std::string> list_lines(SourceObject& object, std::string_view function) {
  auto functions = object.functions();
  if (!functions) return functions.error();
  const FunctionIndex& index = **functions;
  std::vector<const FunctionInstance*> instances = index.find(function);
  if (instances.empty()) return make_error(fmt::format("no function '{}' in the debug information of {}", function, object.path()));
  const FunctionInstance& first = *instances.front();
  // The lines with code, over every copy of the function, in its own file.
  // Code a prologue stores the frame with is not a line to stop on (gdb moves such a
  // breakpoint after it, and variables are not there yet).
  auto info = object.debug_info();
  if (!info) return info.error();
  std::set<unsigned> lines;
  for (const FunctionInstance* instance : instances) {
    const uint64_t start =
        !instance->inlined && parameters_live_in_frame(**info, *instance) ? after_prologue(index, *instance) : 0;
    for (const AddressRange& range : instance->ranges) {
      auto [begin, end] = index.rows_in(range.begin, range.end);
      for (auto row = begin; row != end; ++row)
        if (row->address >= start && *row->file == instance->decl_file && row->line >= instance->decl_line)
          lines.insert(row->line);
    }
  }
  if (lines.empty()) return make_error(fmt::format("{} has no line information", function));
  std::string out = fmt::format("<{}@{}:0>\n", first.name, first.decl_file);
  std::vector<std::string> source;
  if (std::ifstream in(first.decl_file); in)
    for (std::string text; std::getline(in, text);) source.push_back(text);
  const unsigned last = *lines.rbegin();
  for (unsigned line = first.decl_line; line <= last; ++line) {
    const std::string text = line >= 1 && line <= source.size() ? source[line - 1] : "";
    if (lines.count(line) != 0) out += fmt::format("{:>7}  {}\n", line - first.decl_line, text);
    else out += fmt::format("         {}\n", text);
  }
  return out;
}

Result<std::string> list_variables(SourceObjects& objects, const std::string& binary, std::string_view place) {
  // The addresses are the ones a definition reading variables there would probe.
  auto expansion = expand_source_definition(fmt::format("p {} $vars", place), {binary}, objects);
  if (!expansion) return expansion.error();
  SourceObject& object = objects.get(binary);
  auto info = object.debug_info();
  if (!info) return info.error();
  auto elf = object.elf();
  if (!elf) return elf.error();
  auto functions = object.functions();
  if (!functions) return functions.error();
  std::string out;
  static const std::regex where(R"(^[pr]\S*:(?:[^/\s]+/)?(\S+) \S*:(0x[0-9a-f]+))");
  for (const std::string& definition : expansion->definitions) {
    std::smatch match;
    if (!std::regex_search(definition, match, where)) continue;
    const auto address = (*elf)->file_offset_to_address(std::stoull(match[2].str(), nullptr, 16));
    if (!address) continue;
    const FunctionInstance* function = (*functions)->outermost_containing(*address);
    out += fmt::format("Available variables at {} (@<{}+{}>, {:#x})\n", match[1].str(), function ? function->name : "?",
                       function ? *address - function->entry : 0, *address);
    for (const ScopeVariable& variable : describe_scope(**info, *address))
      out += fmt::format("        {}\t{}{}\n", variable.type, variable.name, variable.available ? "" : "\t(optimised out here)");
  }
  return out;
}

Result<std::string> list_markers(SourceObject& object, std::string_view glob) {
  auto markers = object.markers();
  if (!markers) return markers.error();
  const std::string pattern = glob.empty() ? "*" : std::string(glob);
  std::string out;
  for (const SdtMarker& marker : **markers) {
    const std::string name = marker.provider + ":" + marker.name;
    if (fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    out += fmt::format("%sdt_{}  pc {:#x}", name, marker.pc);
    if (marker.semaphore != 0) out += fmt::format("  semaphore {:#x}", marker.semaphore);
    out += fmt::format("  args: {}\n", marker.arguments.empty() ? "(none)" : marker.arguments);
  }
  return out;
}

}  // namespace xprobe::source
