#pragma once
// Source-level definitions turned into the kernel's: perf probe's places and variables are
// resolved against the binary's debug information and its SDT notes, and each address they
// stand for becomes one ordinary definition at BINARY:0xFILE_OFFSET with its arguments in
// the kernel's fetch syntax. The session then parses and plants those as it does any other,
// so both engines run them unchanged:
//
//   p:srv/h ./srv:handle_req:12 len=req->hdr.len path=req->path:string
//     -> p:srv/h /abs/srv:0x1189 len=+4(+8(-24(%bp))):u32 path=+0(+16(-24(%bp))):string
//   p:py/fe /usr/bin/python3.11:%sdt_python:function__entry file=+0($arg1):string
//     -> p:py/fe /usr/bin/python3.11:0xf20a1(0x684260) file=+0(%bp):string
//
// A definition without a source-level part is left as written. Event names follow perf
// probe: FUNC, FUNC_L<RLN> for lines, FUNC_<OFFS>, FUNC__return, the marker's NAME in group
// sdt_PROVIDER; a place with several addresses gets NAME, NAME_1, NAME_2, ...
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.h"
#include "source/debug_info.h"
#include "source/function_index.h"
#include "source/sdt_markers.h"
#include "support/result.h"

namespace xprobe::source {

// One object's ELF, debug information and markers, each read when first needed.
class SourceObject {
 public:
  explicit SourceObject(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  Result<const elf::ElfFile*> elf();
  Result<const DebugInfo*> debug_info();
  Result<const FunctionIndex*> functions();
  Result<const std::vector<SdtMarker>*> markers();

 private:
  std::string path_;
  std::optional<Result<elf::ElfFile>> elf_;
  std::optional<Result<std::unique_ptr<DebugInfo>>> debug_;
  std::optional<Result<FunctionIndex>> functions_;
  std::optional<Result<std::vector<SdtMarker>>> markers_;
};

class SourceObjects {
 public:
  SourceObject& get(const std::string& path);

 private:
  std::map<std::string, std::unique_ptr<SourceObject>> objects_;
};

struct ExpansionContext {
  std::string main_executable;  // the path a definition without BINARY means
};

struct Expansion {
  bool source_level = false;             // false: the definition is left as written
  std::vector<std::string> definitions;  // kernel-syntax definitions, one per address
};

Result<Expansion> expand_source_definition(std::string_view text, const ExpansionContext& context, SourceObjects& objects);

// perf's -O0 rule: when a function's parameters live in its frame (DW_OP_fbreg expressions,
// not location lists) its prologue stores them there, so a probe that reads variables, and
// gdb's breakpoint, go after it.
bool parameters_live_in_frame(const DebugInfo& info, const FunctionInstance& function);

// The address after a function's prologue as gdb's `break FUNC` chooses it: the start of the
// second line-table row of the function (its opening line ends there).
uint64_t after_prologue(const FunctionIndex& index, const FunctionInstance& function);

// Where a line of a source file starts (gdb's `break FILE:LINE`): for every innermost block
// whose code holds the line, the lowest address of its statement rows for it.
struct LineAddress {
  uint64_t address = 0;
  const FunctionInstance* function = nullptr;  // the innermost instance holding it
};
std::vector<LineAddress> line_addresses(const FunctionIndex& index, const DebugInfo& info, std::string_view file,
                                        unsigned line, const FunctionInstance* within = nullptr);

}  // namespace xprobe::source
