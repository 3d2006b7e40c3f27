#include "source/function_index.h"

#include <dwarf.h>
#include <fnmatch.h>

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace xprobe::source {
namespace {

bool is_glob(std::string_view text) { return text.find_first_of("*?[") != std::string_view::npos; }

const char* attribute_string(Dwarf_Die* die, unsigned attribute) {
  Dwarf_Attribute storage;
  Dwarf_Attribute* value = dwarf_attr_integrate(die, attribute, &storage);
  return value != nullptr ? dwarf_formstring(value) : nullptr;
}

unsigned attribute_unsigned(Dwarf_Die* die, unsigned attribute) {
  Dwarf_Attribute storage;
  Dwarf_Word value = 0;
  Dwarf_Attribute* found = dwarf_attr_integrate(die, attribute, &storage);
  if (found == nullptr || dwarf_formudata(found, &value) != 0) return 0;
  return static_cast<unsigned>(value);
}

std::vector<AddressRange> ranges_of(Dwarf_Die* die) {
  std::vector<AddressRange> ranges;
  Dwarf_Addr base = 0, begin = 0, end = 0;
  ptrdiff_t offset = 0;
  // A malformed range list ends the walk (negative) rather than looping.
  for (int guard = 0; guard < 100000; ++guard) {
    offset = dwarf_ranges(die, offset, &base, &begin, &end);
    if (offset <= 0) break;
    if (end > begin) ranges.push_back({begin, end});
  }
  return ranges;
}

class Walker {
 public:
  Walker(std::vector<FunctionInstance>& out, std::map<Dwarf_Off, std::string>& scopes)
      : out_(out), scope_of_declaration_(scopes) {}

  void walk_unit(Dwarf_Die* cu) {
    cu_ = dwarf_dieoffset(cu);
    files_ = nullptr;
    file_count_ = 0;
    (void)dwarf_getsrcfiles(cu, &files_, &file_count_);
    walk_children(cu, "", "", 0);
  }

 private:
  // The name a DIE's definition is qualified by: its declaration's scope when it refers to
  // one (an out-of-class method definition), else the scope it appears in.
  std::string qualified(Dwarf_Die* die, const std::string& scope, const char* name) {
    Dwarf_Attribute storage;
    for (unsigned attribute : {DW_AT_specification, DW_AT_abstract_origin}) {
      Dwarf_Die target;
      if (dwarf_attr(die, attribute, &storage) != nullptr && dwarf_formref_die(&storage, &target) != nullptr) {
        // An abstract origin may itself point at a specification.
        for (int hops = 0; hops < 4; ++hops) {
          auto found = scope_of_declaration_.find(dwarf_dieoffset(&target));
          if (found != scope_of_declaration_.end()) return found->second.empty() ? name : found->second + "::" + name;
          Dwarf_Attribute next;
          if (dwarf_attr(&target, DW_AT_specification, &next) == nullptr || dwarf_formref_die(&next, &target) == nullptr)
            break;
        }
      }
    }
    return scope.empty() ? name : scope + "::" + name;
  }

  std::string file_name(unsigned index) const {
    if (files_ == nullptr || index >= file_count_) return {};
    const char* name = dwarf_filesrc(files_, index, nullptr, nullptr);
    return name != nullptr ? name : "";
  }

  void walk_children(Dwarf_Die* parent, const std::string& scope, const std::string& caller, int depth) {
    if (depth > 64) return;  // a cycle or absurd nesting in untrusted DWARF
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      const int tag = dwarf_tag(&child);
      switch (tag) {
        case DW_TAG_namespace:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type: {
          const char* name = dwarf_diename(&child);
          const std::string inner = name == nullptr ? scope : (scope.empty() ? name : scope + "::" + name);
          walk_children(&child, inner, caller, depth + 1);
          break;
        }
        case DW_TAG_subprogram:
        case DW_TAG_inlined_subroutine: {
          scope_of_declaration_.emplace(dwarf_dieoffset(&child), scope);
          const char* name = attribute_string(&child, DW_AT_name);
          std::vector<AddressRange> ranges = ranges_of(&child);
          std::string self = caller;
          if (name != nullptr && !ranges.empty() && (tag == DW_TAG_subprogram || !caller.empty())) {
            FunctionInstance instance;
            instance.name = qualified(&child, scope, name);
            if (const char* linkage = attribute_string(&child, DW_AT_linkage_name)) instance.linkage_name = linkage;
            instance.inlined = tag == DW_TAG_inlined_subroutine;
            Dwarf_Addr entry = 0;
            instance.entry = dwarf_entrypc(&child, &entry) == 0 ? entry : ranges.front().begin;
            instance.ranges = std::move(ranges);
            // GCC can give an inlined copy an entry_pc before its code (an empty first range):
            // its code starts where its first non-empty range does, as gdb takes it.
            if (!instance.contains(instance.entry)) instance.entry = instance.ranges.front().begin;
            if (const char* file = dwarf_decl_file(&child)) instance.decl_file = file;
            int line = 0;
            if (dwarf_decl_line(&child, &line) == 0 && line > 0) instance.decl_line = static_cast<unsigned>(line);
            if (instance.inlined) {
              instance.call_file = file_name(attribute_unsigned(&child, DW_AT_call_file));
              instance.call_line = attribute_unsigned(&child, DW_AT_call_line);
              instance.caller = caller;
            }
            instance.die = dwarf_dieoffset(&child);
            instance.cu = cu_;
            // The caller inlined copies name is the out-of-line function holding them.
            if (tag == DW_TAG_subprogram) self = instance.name;
            out_.push_back(std::move(instance));
          }
          walk_children(&child, scope, self, depth + 1);
          break;
        }
        case DW_TAG_lexical_block:
          walk_children(&child, scope, caller, depth + 1);
          break;
        default: break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  std::vector<FunctionInstance>& out_;
  std::map<Dwarf_Off, std::string>& scope_of_declaration_;
  Dwarf_Off cu_ = 0;
  Dwarf_Files* files_ = nullptr;
  size_t file_count_ = 0;
};

}  // namespace

bool FunctionInstance::contains(uint64_t address) const {
  return std::any_of(ranges.begin(), ranges.end(), [&](const AddressRange& r) { return address >= r.begin && address < r.end; });
}

bool file_matches(std::string_view path, std::string_view file) {
  if (file.empty() || path.size() < file.size()) return false;
  if (path == file) return true;
  if (path.substr(path.size() - file.size()) != file) return false;
  return path[path.size() - file.size() - 1] == '/';
}

Result<FunctionIndex> FunctionIndex::build(const DebugInfo& info) {
  FunctionIndex index;
  std::map<Dwarf_Off, std::string> scopes;
  Walker walker(index.instances_, scopes);
  std::map<std::string, const std::string*> interned;
  Dwarf_Off offset = 0, next = 0;
  size_t header_size = 0;
  while (dwarf_nextcu(info.dwarf(), offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(info.dwarf(), offset + header_size, &cu) != nullptr && dwarf_tag(&cu) == DW_TAG_compile_unit) {
      ++index.compilation_units_;
      walker.walk_unit(&cu);
      Dwarf_Lines* lines = nullptr;
      size_t count = 0;
      if (dwarf_getsrclines(&cu, &lines, &count) == 0) {
        for (size_t i = 0; i < count; ++i) {
          Dwarf_Line* line = dwarf_onesrcline(lines, i);
          bool statement = false, end_sequence = false;
          Dwarf_Addr address = 0;
          int number = 0;
          if (line == nullptr || dwarf_linebeginstatement(line, &statement) != 0 || !statement ||
              dwarf_lineendsequence(line, &end_sequence) != 0 || end_sequence || dwarf_lineaddr(line, &address) != 0 ||
              dwarf_lineno(line, &number) != 0 || number <= 0)
            continue;
          const char* file = dwarf_linesrc(line, nullptr, nullptr);
          const std::string name = file != nullptr ? file : "";
          auto found = interned.find(name);
          if (found == interned.end()) {
            index.files_.push_back(std::make_unique<std::string>(name));
            found = interned.emplace(name, index.files_.back().get()).first;
          }
          index.rows_.push_back({address, static_cast<unsigned>(number), found->second});
        }
      }
    }
    offset = next;
  }
  if (index.compilation_units_ == 0)
    return make_error(fmt::format("{}: its DWARF has no compilation unit", info.debug_path()));
  std::stable_sort(index.rows_.begin(), index.rows_.end(), [](const LineRow& a, const LineRow& b) { return a.address < b.address; });
  for (size_t i = 0; i < index.instances_.size(); ++i) {
    index.by_name_[index.instances_[i].name].push_back(i);
    index.by_die_.emplace(index.instances_[i].die, i);
    if (!index.instances_[i].linkage_name.empty()) index.by_name_[index.instances_[i].linkage_name].push_back(i);
  }
  return index;
}

std::vector<const FunctionInstance*> FunctionIndex::find(std::string_view name) const {
  std::vector<const FunctionInstance*> found;
  if (!is_glob(name)) {
    auto it = by_name_.find(std::string(name));
    if (it != by_name_.end())
      for (size_t i : it->second) found.push_back(&instances_[i]);
    return found;
  }
  const std::string pattern(name);
  for (const FunctionInstance& instance : instances_)
    if (fnmatch(pattern.c_str(), instance.name.c_str(), 0) == 0 ||
        (!instance.linkage_name.empty() && fnmatch(pattern.c_str(), instance.linkage_name.c_str(), 0) == 0))
      found.push_back(&instance);
  return found;
}

std::pair<std::vector<LineRow>::const_iterator, std::vector<LineRow>::const_iterator> FunctionIndex::rows_in(
    uint64_t begin, uint64_t end) const {
  auto first = std::lower_bound(rows_.begin(), rows_.end(), begin, [](const LineRow& r, uint64_t a) { return r.address < a; });
  auto last = std::lower_bound(first, rows_.end(), end, [](const LineRow& r, uint64_t a) { return r.address < a; });
  return {first, last};
}

const FunctionInstance* FunctionIndex::instance_of_die(Dwarf_Off die) const {
  auto found = by_die_.find(die);
  return found == by_die_.end() ? nullptr : &instances_[found->second];
}

const FunctionInstance* FunctionIndex::outermost_containing(uint64_t address) const {
  for (const FunctionInstance& instance : instances_)
    if (!instance.inlined && instance.contains(address)) return &instance;
  return nullptr;
}

}  // namespace xprobe::source
