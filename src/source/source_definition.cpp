#include "source/source_definition.h"

#include <dwarf.h>
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <fmt/format.h>
#include <fstream>
#include <set>

#include "source/source_place.h"
#include "source/variable_access.h"

namespace xprobe::source {
namespace {

struct Header {
  char kind = 'p';
  std::string maxactive;
  std::string group;
  std::string event;
};

std::optional<Header> parse_header(std::string_view word) {
  if (word.empty() || (word[0] != 'p' && word[0] != 'r')) return std::nullopt;
  Header header;
  header.kind = word[0];
  size_t i = 1;
  while (i < word.size() && std::isdigit(static_cast<unsigned char>(word[i]))) header.maxactive += word[i++];
  if (i == word.size()) return header;
  if (word[i] != ':') return std::nullopt;
  std::string_view name = word.substr(i + 1);
  const size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    header.group = std::string(name.substr(0, slash));
    name.remove_prefix(slash + 1);
  }
  header.event = std::string(name);
  return header;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

std::string identifier(std::string_view text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
  if (out.size() > 63) out.resize(63);
  return out;
}

// An argument word split into NAME=, the expression and :TYPE.
struct ArgumentWord {
  std::string name;
  std::string body;
  std::optional<std::string> type;
};

ArgumentWord split_argument(std::string_view word) {
  ArgumentWord out;
  const size_t equals = word.find('=');
  if (equals != std::string_view::npos && equals > 0) {
    bool plain = true;
    for (char c : word.substr(0, equals)) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (plain) {
      out.name = std::string(word.substr(0, equals));
      word.remove_prefix(equals + 1);
    }
  }
  // The last single ':' (not a C++ "::") starts the type.
  size_t type_at = std::string_view::npos;
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] != ':') continue;
    if (i + 1 < word.size() && word[i + 1] == ':') {
      ++i;
      continue;
    }
    type_at = i;
  }
  if (type_at != std::string_view::npos) {
    out.type = std::string(word.substr(type_at + 1));
    word = word.substr(0, type_at);
  }
  out.body = std::string(word);
  return out;
}

bool is_scope_list(std::string_view body) { return body == "$params" || body == "$vars"; }

bool uses_variables(const std::vector<std::string>& arguments) {
  for (const std::string& word : arguments) {
    const ArgumentWord argument = split_argument(word);
    if (is_scope_list(argument.body) || is_variable_expression(argument.body)) return true;
  }
  return false;
}

struct Point {
  uint64_t address = 0;  // link-time
  std::string event;     // before the _N suffixes
  std::optional<uint64_t> semaphore;  // link-time address of an SDT semaphore
  const SdtMarker* marker = nullptr;
};

class Expander {
 public:
  Expander(const ExpansionContext& context, SourceObjects& objects) : context_(context), objects_(objects) {}

  Result<Expansion> expand(std::string_view text) {
    Expansion expansion;
    const std::vector<std::string> words = split_words(text);
    if (words.size() < 2) return expansion;
    auto header = parse_header(words[0]);
    if (!header) return expansion;
    const std::string& place_text = words[1];
    const std::vector<std::string> arguments(words.begin() + 2, words.end());
    const bool source_place = is_source_place(place_text);
    const bool variables = uses_variables(arguments);

    SourcePlace place;
    if (source_place) {
      auto parsed = parse_source_place(place_text);
      if (!parsed) return parsed.error();
      place = std::move(parsed.value());
    } else {
      // The kernel's [BINARY:]SYMBOL[+OFFS][%return]: more only with variables, or when the
      // debug information knows inlined copies of the function.
      auto parsed = parse_source_place(place_text);
      if (!parsed || parsed->kind != SourcePlace::Kind::Function || parsed->function.find_first_of("*?[") != std::string::npos ||
          (!parsed->binary.empty() && parsed->binary.find('/') == std::string::npos) ||
          (parsed->function.size() > 1 && parsed->function[0] == '0' && parsed->function[1] == 'x'))
        return expansion;
      place = std::move(parsed.value());
      // A C++ qualified name ("ns::Cls::method") is a source name: the kernel's grammar has none.
      // A byte offset keeps the kernel's meaning, bytes into that symbol: the same offset into
      // an inlined copy or a .constprop/.part clone is some other instruction, often inside one.
      const bool byte_offset = place.offset.value_or(0) != 0;
      if (!variables && place.function.find("::") == std::string::npos && (byte_offset || !has_inlined_copies(place)))
        return expansion;
    }
    expansion.source_level = true;
    const std::string binary = place.binary.empty() ? context_.main_executable : place.binary;
    if (binary.empty() || binary.find('/') == std::string::npos)
      return make_error(fmt::format("'{}': a source-level place needs the binary by its path", text));
    object_ = &objects_.get(binary);
    auto elf = object_->elf();
    if (!elf) return elf.error();
    elf_ = *elf;

    std::vector<Point> points;
    bool entry_of_function = false;
    const FunctionInstance* return_function = nullptr;
    const bool is_return = header->kind == 'r' || place.is_return;
    if (place.kind == SourcePlace::Kind::Marker) {
      auto found = marker_points(place);
      if (!found) return make_error(fmt::format("'{}': {}", text, found.error().message));
      points = std::move(*found);
    } else {
      auto found = source_points(place, variables, is_return, entry_of_function, return_function);
      if (!found) return make_error(fmt::format("'{}': {}", text, found.error().message));
      points = std::move(*found);
    }
    if (points.empty()) return make_error(fmt::format("'{}': no address to probe", text));

    std::string group = header->group;
    if (group.empty() && place.kind == SourcePlace::Kind::Marker) group = identifier("sdt_" + place.provider);
    std::map<std::string, unsigned> used;
    for (const Point& point : points) {
      std::string event = header->event.empty() ? point.event : header->event;
      if (header->event.empty() && is_return && place.kind != SourcePlace::Kind::Marker) event += "__return";
      event = identifier(event);
      const unsigned seen = used[event]++;
      if (seen != 0) event += fmt::format("_{}", seen);
      const auto file_offset = elf_->address_to_file_offset(point.address);
      if (!file_offset)
        return make_error(fmt::format("'{}': {:#x} is not in a loadable segment of {}", text, point.address, binary));
      std::string definition = fmt::format("{}{}:{}{} {}:{:#x}", is_return ? 'r' : 'p', header->maxactive,
                                           group.empty() ? "" : group + "/", event, binary, *file_offset);
      if (point.semaphore) {
        const auto semaphore_offset = elf_->address_to_file_offset(*point.semaphore);
        if (!semaphore_offset)
          return make_error(fmt::format("'{}': the semaphore at {:#x} is not in the file", text, *point.semaphore));
        definition += fmt::format("({:#x})", *semaphore_offset);
      }
      auto translated = translate_arguments(arguments, point, is_return);
      if (!translated) return make_error(fmt::format("'{}' at {:#x}: {}", text, point.address, translated.error().message));
      for (const std::string& argument : *translated) definition += " " + argument;
      expansion.definitions.push_back(std::move(definition));
    }
    return expansion;
  }

 private:
  bool has_inlined_copies(const SourcePlace& place) {
    const std::string binary = place.binary.empty() ? context_.main_executable : place.binary;
    if (binary.find('/') == std::string::npos) return false;
    auto functions = objects_.get(binary).functions();
    if (!functions) return false;
    for (const FunctionInstance* instance : (*functions)->find(place.function))
      if (instance->inlined) return true;
    return false;
  }

  Result<std::vector<Point>> marker_points(const SourcePlace& place) {
    auto markers = object_->markers();
    if (!markers) return markers.error();
    std::vector<Point> points;
    for (const SdtMarker& marker : **markers) {
      if (fnmatch(place.provider.c_str(), marker.provider.c_str(), 0) != 0 || fnmatch(place.marker.c_str(), marker.name.c_str(), 0) != 0)
        continue;
      Point point;
      point.address = marker.pc;
      point.event = marker.name;
      if (marker.semaphore != 0) point.semaphore = marker.semaphore;
      point.marker = &marker;
      points.push_back(point);
    }
    if (points.empty()) {
      std::set<std::string> known;
      for (const SdtMarker& marker : **markers) known.insert(marker.provider + ":" + marker.name);
      return make_error(fmt::format("no SDT marker {}:{} in {} (it has {})", place.provider, place.marker, object_->path(),
                                    known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    return points;
  }

  static std::vector<const FunctionInstance*> filter_file(std::vector<const FunctionInstance*> found, const std::string& file) {
    if (file.empty()) return found;
    std::erase_if(found, [&](const FunctionInstance* f) { return !file_matches(f->decl_file, file); });
    return found;
  }

  Result<std::vector<Point>> source_points(const SourcePlace& place, bool variables, bool is_return, bool& entry_of_function,
                                           const FunctionInstance*& return_function) {
    auto functions_result = object_->functions();
    if (!functions_result) return functions_result.error();
    const FunctionIndex& index = **functions_result;
    auto info_result = object_->debug_info();
    if (!info_result) return info_result.error();
    const DebugInfo& info = **info_result;
    std::vector<Point> points;

    if (place.kind == SourcePlace::Kind::FileLine) {
      for (const LineAddress& at : line_addresses(index, info, place.file, *place.line)) {
        const unsigned relative = *place.line >= at.function->decl_line ? *place.line - at.function->decl_line : *place.line;
        points.push_back({at.address, fmt::format("{}_L{}", at.function->name, relative), std::nullopt, nullptr});
      }
      if (points.empty()) return make_error(no_code_message(index, place.file, *place.line));
      return points;
    }
    if (place.kind == SourcePlace::Kind::FilePattern) return pattern_points(index, info, place, nullptr);

    std::vector<const FunctionInstance*> instances = filter_file(index.find(place.function), place.file);
    if (instances.empty())
      return make_error(fmt::format("no function '{}'{} in the debug information of {}", place.function,
                                    place.file.empty() ? "" : " in " + place.file, object_->path()));
    if (!place.pattern.empty()) {
      std::vector<Point> all;
      for (const FunctionInstance* instance : instances) {
        auto found = pattern_points(index, info, place, instance);
        if (found) all.insert(all.end(), found->begin(), found->end());
      }
      if (all.empty()) return make_error(fmt::format("no line of {} matches '{}'", place.function, place.pattern));
      return all;
    }
    if (place.line) {
      for (const FunctionInstance* instance : instances) {
        const unsigned line = instance->decl_line + *place.line;
        for (const LineAddress& at : line_addresses(index, info, instance->decl_file, line, instance))
          points.push_back({at.address, fmt::format("{}_L{}", place.function, *place.line), std::nullopt, nullptr});
      }
      if (points.empty())
        return make_error(fmt::format("line {} of {} (line {} of {}) has no code", *place.line, place.function,
                                      instances.front()->decl_line + *place.line, instances.front()->decl_file));
      dedupe(points);
      return points;
    }
    if (is_return || place.offset) {
      // Only the out-of-line copy returns (an inlined copy has no return) and has an offset.
      for (const FunctionInstance* instance : instances) {
        if (instance->inlined) continue;
        const uint64_t offset = place.offset.value_or(0);
        points.push_back({instance->entry + offset, offset != 0 ? fmt::format("{}_{}", place.function, offset) : place.function,
                          std::nullopt, nullptr});
        return_function = instance;
      }
      if (points.empty())
        return make_error(fmt::format("{} has no out-of-line copy (it is inlined everywhere), so no {}", place.function,
                                      is_return ? "return to probe" : "offset into it"));
      dedupe(points);
      return points;
    }
    entry_of_function = true;
    for (const FunctionInstance* instance : instances) {
      uint64_t address = instance->entry;
      if (variables && !instance->inlined && parameters_live_in_frame(info, *instance)) address = after_prologue(index, *instance);
      points.push_back({address, place.function, std::nullopt, nullptr});
    }
    dedupe(points);
    return points;
  }

  static void dedupe(std::vector<Point>& points) {
    std::set<uint64_t> seen;
    std::erase_if(points, [&](const Point& p) { return !seen.insert(p.address).second; });
  }

  std::string no_code_message(const FunctionIndex& index, const std::string& file, unsigned line) {
    unsigned before = 0, after = 0;
    bool known_file = false;
    for (const LineRow& row : index.rows()) {
      if (!file_matches(*row.file, file)) continue;
      known_file = true;
      if (row.line < line && row.line > before) before = row.line;
      if (row.line > line && (after == 0 || row.line < after)) after = row.line;
    }
    if (!known_file) return fmt::format("no source file '{}' in the debug information of {}", file, object_->path());
    std::string message = fmt::format("line {} of {} has no code", line, file);
    if (before != 0 || after != 0)
      message += fmt::format(" (the nearest lines with code: {}{}{})", before != 0 ? std::to_string(before) : "",
                             before != 0 && after != 0 ? ", " : "", after != 0 ? std::to_string(after) : "");
    return message;
  }

  Result<std::vector<Point>> pattern_points(const FunctionIndex& index, const DebugInfo& info, const SourcePlace& place,
                                            const FunctionInstance* within) {
    // The candidate lines: those with code, in the function or the file.
    std::map<std::string, std::set<unsigned>> lines_by_file;
    if (within != nullptr) {
      for (const AddressRange& range : within->ranges) {
        auto [first, last] = index.rows_in(range.begin, range.end);
        for (auto row = first; row != last; ++row)
          if (*row->file == within->decl_file) lines_by_file[*row->file].insert(row->line);
      }
    } else {
      for (const LineRow& row : index.rows())
        if (file_matches(*row.file, place.file)) lines_by_file[*row.file].insert(row.line);
    }
    if (lines_by_file.empty()) return make_error(fmt::format("no code of '{}'", within ? within->name : place.file));
    std::string pattern;
    for (char c : place.pattern)
      if (!std::isspace(static_cast<unsigned char>(c))) pattern += c;
    std::vector<Point> points;
    for (const auto& [file, lines] : lines_by_file) {
      std::ifstream in(file);
      if (!in) return make_error(fmt::format("a line pattern needs the source file, and {} cannot be read", file));
      std::vector<std::string> source;
      for (std::string line; std::getline(in, line);) source.push_back(line);
      for (unsigned line : lines) {
        if (line == 0 || line > source.size()) continue;
        std::string text;
        for (char c : source[line - 1])
          if (!std::isspace(static_cast<unsigned char>(c))) text += c;
        if (fnmatch(pattern.c_str(), text.c_str(), 0) != 0) continue;
        for (const LineAddress& at : line_addresses(index, info, file, line, within)) {
          const unsigned relative = line >= at.function->decl_line ? line - at.function->decl_line : line;
          points.push_back({at.address, fmt::format("{}_L{}", within ? place.function : at.function->name, relative),
                            std::nullopt, nullptr});
        }
      }
    }
    if (points.empty()) return make_error(fmt::format("no line matches '{}'", place.pattern));
    dedupe(points);
    return points;
  }

  Result<std::vector<std::string>> translate_arguments(const std::vector<std::string>& words, const Point& point, bool is_return) {
    std::vector<std::string> out;
    for (const std::string& word : words) {
      ArgumentWord argument = split_argument(word);
      if (point.marker != nullptr) {
        auto substituted = substitute_marker_arguments(argument, *point.marker);
        if (!substituted) return substituted.error();
        out.push_back(*substituted);
        continue;
      }
      if (is_scope_list(argument.body)) {
        if (is_return) return make_error(fmt::format("{} at a return: the function's variables are gone", argument.body));
        auto info = object_->debug_info();
        if (!info) return info.error();
        for (const std::string& name : variables_in_scope(**info, point.address, argument.body == "$params")) {
          auto compiled = compile(**info, point.address, {name, argument.type});
          if (!compiled) continue;  // $vars takes the variables that have a location here (as perf)
          out.push_back(*compiled);
        }
        continue;
      }
      if (!is_variable_expression(argument.body)) {
        out.push_back(word);
        continue;
      }
      if (is_return) return make_error(fmt::format("'{}' at a return: only $retval and registers are there", argument.body));
      auto info = object_->debug_info();
      if (!info) return info.error();
      auto compiled = compile(**info, point.address, {argument.body, argument.type}, argument.name);
      if (!compiled) return compiled.error();
      out.push_back(*compiled);
    }
    return out;
  }

  Result<std::string> compile(const DebugInfo& info, uint64_t pc, const VariableRequest& request, const std::string& name = {}) {
    StaticAddressWriter writer = [this](uint64_t address) -> std::optional<std::string> {
      if (auto offset = elf_->address_to_file_offset(address)) return fmt::format("@+{:#x}", *offset);
      if (const elf::Symbol* symbol = elf_->symbol_containing(address)) {
        if (symbol->name.find_first_of("+-: ") == std::string::npos)
          return fmt::format("@{}+{}", symbol->name, address - symbol->address);
      }
      return std::nullopt;
    };
    auto compiled = compile_variable(info, pc, request, writer);
    if (!compiled) return compiled.error();
    std::string text = fmt::format("{}={}", name.empty() ? compiled->name : name, compiled->fetcharg);
    const std::string type = request.type ? *request.type : compiled->type;
    if (!type.empty()) text += ":" + type;
    return text;
  }

  // $argN and argN stand for the marker's Nth argument; a bare one gets the note's type.
  Result<std::string> substitute_marker_arguments(const ArgumentWord& argument, const SdtMarker& marker) {
    const std::vector<std::string> operands = split_sdt_arguments(marker.arguments);
    std::string body;
    std::optional<std::string> default_type;
    std::string_view rest = argument.body;
    while (!rest.empty()) {
      size_t skip = 0;
      if (rest.starts_with("$arg")) skip = 4;
      else if (rest.starts_with("arg") && (body.empty() || !(std::isalnum(static_cast<unsigned char>(body.back())) || body.back() == '_')))
        skip = 3;
      size_t digits = skip;
      while (skip != 0 && digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
      if (skip == 0 || digits == skip) {
        body += rest[0];
        rest.remove_prefix(1);
        continue;
      }
      const unsigned number = static_cast<unsigned>(std::stoul(std::string(rest.substr(skip, digits - skip))));
      if (number == 0 || number > operands.size())
        return make_error(fmt::format("the marker {}:{} has {} argument{} ({}), so no ${}", marker.provider, marker.name,
                                      operands.size(), operands.size() == 1 ? "" : "s", marker.arguments,
                                      rest.substr(skip == 4 ? 1 : 0, digits - (skip == 4 ? 1 : 0))));
      auto translated = translate_sdt_argument(operands[number - 1], elf_->arch());
      if (!translated) return translated.error();
      if (rest.size() == digits && body.empty()) default_type = translated->type;
      body += translated->fetcharg;
      rest.remove_prefix(digits);
    }
    std::string text = argument.name.empty() ? "" : argument.name + "=";
    if (argument.name.empty() && default_type) text = argument.body.substr(argument.body[0] == '$' ? 1 : 0) + "=";
    text += body;
    if (argument.type) text += ":" + *argument.type;
    else if (default_type) text += ":" + *default_type;
    return text;
  }

  const ExpansionContext& context_;
  SourceObjects& objects_;
  SourceObject* object_ = nullptr;
  const elf::ElfFile* elf_ = nullptr;
};

}  // namespace

Result<const elf::ElfFile*> SourceObject::elf() {
  if (!elf_) elf_.emplace(elf::ElfFile::open(path_));
  if (!*elf_) return elf_->error();
  return &elf_->value();
}

Result<const DebugInfo*> SourceObject::debug_info() {
  if (!debug_) debug_.emplace(DebugInfo::open(path_));
  if (!*debug_) return debug_->error();
  return debug_->value().get();
}

Result<const FunctionIndex*> SourceObject::functions() {
  if (!functions_) {
    auto info = debug_info();
    if (!info) functions_.emplace(info.error());
    else functions_.emplace(FunctionIndex::build(**info));
  }
  if (!*functions_) return functions_->error();
  return &functions_->value();
}

Result<const std::vector<SdtMarker>*> SourceObject::markers() {
  if (!markers_) {
    auto file = elf();
    if (!file) markers_.emplace(file.error());
    else markers_.emplace(read_sdt_markers(path_));
  }
  if (!*markers_) return markers_->error();
  return &markers_->value();
}

SourceObject& SourceObjects::get(const std::string& path) {
  auto& slot = objects_[path];
  if (!slot) slot = std::make_unique<SourceObject>(path);
  return *slot;
}

bool parameters_live_in_frame(const DebugInfo& info, const FunctionInstance& function) {
  Dwarf_Die die;
  if (dwarf_offdie(info.dwarf(), function.die, &die) == nullptr) return false;
  Dwarf_Die child;
  if (dwarf_child(&die, &child) != 0) return false;
  do {
    if (dwarf_tag(&child) != DW_TAG_formal_parameter) continue;
    Dwarf_Attribute attribute;
    if (dwarf_attr(&child, DW_AT_location, &attribute) == nullptr) continue;
    const unsigned form = dwarf_whatform(&attribute);
    if (form == DW_FORM_sec_offset || form == DW_FORM_loclistx) return false;
    Dwarf_Op* ops = nullptr;
    size_t count = 0;
    if (dwarf_getlocation(&attribute, &ops, &count) == 0 && count > 0 && ops[0].atom == DW_OP_fbreg) return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

uint64_t after_prologue(const FunctionIndex& index, const FunctionInstance& function) {
  for (const AddressRange& range : function.ranges) {
    if (function.entry < range.begin || function.entry >= range.end) continue;
    auto [first, last] = index.rows_in(range.begin, range.end);
    std::optional<unsigned> opening;
    for (auto row = first; row != last; ++row) {
      if (row->address < function.entry) continue;
      if (!opening) {
        opening = row->line;
        continue;
      }
      if (row->address > function.entry && row->line != *opening) return row->address;
    }
  }
  return function.entry;
}

std::vector<LineAddress> line_addresses(const FunctionIndex& index, const DebugInfo& info, std::string_view file,
                                        unsigned line, const FunctionInstance* within) {
  // One address per innermost block (lexical block, inlined copy or function) holding rows of
  // the line: the lowest, as gdb's `break FILE:LINE` keeps one location per block.
  struct Block {
    uint64_t address;
    const FunctionInstance* function;
  };
  std::map<Dwarf_Off, Block> lowest;
  auto consider = [&](const LineRow& row) {
    if (row.line != line || !file_matches(*row.file, file)) return;
    Dwarf_Die cu;
    if (dwarf_addrdie(info.dwarf(), row.address, &cu) == nullptr) return;
    Dwarf_Die* scopes = nullptr;
    const int count = dwarf_getscopes(&cu, row.address, &scopes);
    if (count <= 0) return;
    const Dwarf_Off block = dwarf_dieoffset(&scopes[0]);
    const FunctionInstance* function = nullptr;
    for (int i = 0; i < count && function == nullptr; ++i) {
      const int tag = dwarf_tag(&scopes[i]);
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) function = index.instance_of_die(dwarf_dieoffset(&scopes[i]));
    }
    std::free(scopes);
    if (function == nullptr) return;
    auto [it, inserted] = lowest.emplace(block, Block{row.address, function});
    if (!inserted && row.address < it->second.address) it->second = Block{row.address, function};
  };
  if (within != nullptr) {
    for (const AddressRange& range : within->ranges) {
      auto [first, last] = index.rows_in(range.begin, range.end);
      for (auto row = first; row != last; ++row) consider(*row);
    }
  } else {
    for (const LineRow& row : index.rows()) consider(row);
  }
  std::vector<LineAddress> out;
  for (const auto& [block, found] : lowest) out.push_back({found.address, within != nullptr ? within : found.function});
  std::sort(out.begin(), out.end(), [](const LineAddress& a, const LineAddress& b) { return a.address < b.address; });
  out.erase(std::unique(out.begin(), out.end(), [](const LineAddress& a, const LineAddress& b) { return a.address == b.address; }),
            out.end());
  return out;
}

Result<Expansion> expand_source_definition(std::string_view text, const ExpansionContext& context, SourceObjects& objects) {
  Expander expander(context, objects);
  return expander.expand(text);
}

}  // namespace xprobe::source
