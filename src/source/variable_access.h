#pragma once
// perf probe's variable arguments at a probe's pc: LOCALVAR, PARAM, their members
// (var->a.b), array elements (arr[3]), through pointers and C++ references, compiled into the
// kernel's fetch-argument text (%di, -20(%bp), +8(+0(%di)), @+0x3010) with a default type
// from DWARF (u32, s8, x64, a bitfield b3@4/32). Both engines then read them unchanged.
//
// Where a variable lives comes from its DW_AT_location at the pc (a single expression or a
// location list), the frame base of the function (DW_OP_call_frame_cfa through the call frame
// information at the pc) and DWARF register numbers. A variable that is optimised out at the
// pc, not in scope, or in a place fetch arguments cannot express (DW_OP_entry_value, pieces,
// computed values) is an error that says so, and where it is available.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source/debug_info.h"
#include "support/result.h"

namespace xprobe::source {

struct CompiledVariable {
  std::string name;      // a default argument name: "req_hdr_len"
  std::string fetcharg;  // "+4(+8(%di))"
  std::string type;      // "u32"; empty when the caller's type applies
};

struct VariableRequest {
  std::string expression;         // "req->hdr.len", "arr[2]", "this->count"
  std::optional<std::string> type;  // the :TYPE written after it ("string", "x32")
};

// How the caller turns a static variable's link-time address into something the kernel
// syntax can read ("@+0x3010", or "@sym+4"); nullopt: it cannot.
using StaticAddressWriter = std::function<std::optional<std::string>(uint64_t link_address)>;

Result<CompiledVariable> compile_variable(const DebugInfo& info, uint64_t pc, const VariableRequest& request,
                                          const StaticAddressWriter& static_address);

// The names perf probe's $params and $vars stand for at `pc` (parameters; parameters and
// the local variables in scope), innermost scope first, each once.
std::vector<std::string> variables_in_scope(const DebugInfo& info, uint64_t pc, bool parameters_only);

struct ScopeVariable {
  std::string name;
  std::string type;        // as C writes it: "struct request *", "int[4]"
  bool parameter = false;
  bool available = false;  // has a location at this pc
};
// Every variable visible at `pc` (for listings), innermost scope first.
std::vector<ScopeVariable> describe_scope(const DebugInfo& info, uint64_t pc);

// True when `text` (an argument after its NAME=, before its :TYPE) is a source expression
// rather than a kernel fetch argument: it starts with a C identifier and is not one of the
// seed's aliases (aN, sN, rN, rv, rp).
bool is_variable_expression(std::string_view text);

}  // namespace xprobe::source
