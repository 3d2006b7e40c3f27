#pragma once
// Every function of an object's DWARF with its machine code: out-of-line copies
// (DW_TAG_subprogram with addresses) and inlined instances (DW_TAG_inlined_subroutine), named
// as the source names them (C++: qualified, "ns::Cls::method"), with their declaration line
// and the lines their code covers. Built once per object by one walk of its DIEs.
#include <elfutils/libdw.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "source/debug_info.h"
#include "support/result.h"

namespace xprobe::source {

struct AddressRange {
  uint64_t begin = 0;  // link-time addresses, [begin, end)
  uint64_t end = 0;
};

struct FunctionInstance {
  std::string name;              // qualified source name
  std::string linkage_name;      // DW_AT_linkage_name when there is one (C++)
  bool inlined = false;          // an inlined copy inside `caller`
  uint64_t entry = 0;            // where the instance's code starts executing
  std::vector<AddressRange> ranges;
  std::string decl_file;         // the file the function is written in
  unsigned decl_line = 0;        // the line of its name
  std::string call_file;         // inlined: where it was inlined
  unsigned call_line = 0;
  std::string caller;            // inlined: the out-of-line function holding this copy
  Dwarf_Off die = 0;             // the instance's DIE (for its variables)
  Dwarf_Off cu = 0;              // its compilation unit's DIE

  bool contains(uint64_t address) const;
};

// One row of a line table that starts a statement.
struct LineRow {
  uint64_t address = 0;
  unsigned line = 0;
  const std::string* file = nullptr;  // interned in the index
};

class FunctionIndex {
 public:
  static Result<FunctionIndex> build(const DebugInfo& info);

  const std::vector<FunctionInstance>& instances() const { return instances_; }
  // Instances whose name (or linkage name) equals `name`, or matches it as a glob (* ? [).
  std::vector<const FunctionInstance*> find(std::string_view name) const;
  // The statement rows of the line tables in address order (is_stmt rows only).
  const std::vector<LineRow>& rows() const { return rows_; }
  // Rows inside [begin, end).
  std::pair<std::vector<LineRow>::const_iterator, std::vector<LineRow>::const_iterator> rows_in(uint64_t begin,
                                                                                                 uint64_t end) const;
  // The out-of-line function covering `address` (not an inlined instance), or nullptr.
  const FunctionInstance* outermost_containing(uint64_t address) const;
  size_t compilation_units() const { return compilation_units_; }
  const FunctionInstance* instance_of_die(Dwarf_Off die) const;

 private:
  std::vector<FunctionInstance> instances_;
  std::vector<LineRow> rows_;
  std::vector<std::unique_ptr<std::string>> files_;
  size_t compilation_units_ = 0;
  std::unordered_map<std::string, std::vector<size_t>> by_name_;
  std::unordered_map<Dwarf_Off, size_t> by_die_;
};

// True when `path` names `file`: equal, or `file` is a suffix of it after a '/'
// ("srv.c" and "src/srv.c" both name "/home/u/proj/src/srv.c").
bool file_matches(std::string_view path, std::string_view file);

}  // namespace xprobe::source
