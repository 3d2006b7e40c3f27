#pragma once
// The fetcharg grammar of uprobe_events, one argument of a definition:
//
//   [NAME=]FETCHARG[:TYPE]
//   FETCHARG: %REG | $stack | $stackN | $retval | $comm | $argN | @ADDR | @+FILE_OFFSET |
//             @SYM[+|-OFFS] | \IMM | \"STRING" | +|-[u]OFFS(FETCHARG)
//             and the seed's aliases aN, sN, rv, rp, rN (see definition_parser.h)
//   TYPE:     a row of the fetch type table (fetch_type.h), b<W>@<O>/<C>, each with [N]
//
// Errors carry the kernel's messages and caret columns.
#include <cstddef>
#include <span>
#include <string_view>

#include "probe/arch_registers.h"
#include "probe/definition.h"
#include "probe/parse_error.h"

namespace xprobe::probe {

// The kernel's limits on one argument (kernel/trace/trace_probe.h).
inline constexpr unsigned kMaxArgumentLength = 63;  // MAX_ARGSTR_LEN: the text after NAME=
// Memory reads in one argument, @ADDR's own included: the kernel's FETCH_INSN_MAX (16)
// instructions hold the source, the reads and the store.
inline constexpr unsigned kMaxDereferenceDepth = 14;

// What an argument's meaning depends on in the rest of the definition.
struct FetchArgContext {
  const ArchProbeAbi& abi;
  ProbeKind kind = ProbeKind::Entry;  // $retval only on a return probe
  bool at_function_entry = true;      // $argN only at a function's entry (or its return)
  std::string_view command;           // the whole definition, for errors
};

// The argument whose text starts at `column` of context.command; `index` is its position
// (from 0, for the kernel's default name argN), `earlier` the arguments before it.
ParseResult<ProbeArgument> parse_fetch_argument(std::string_view text, size_t column, size_t index,
                                                std::span<const ProbeArgument> earlier,
                                                const FetchArgContext& context);

}  // namespace xprobe::probe
