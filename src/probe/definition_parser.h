#pragma once
// Parser for probe definitions in the kernel's uprobe_events grammar:
//
//   p[:[GRP/]EVENT] PLACE [ARGS]            entry probe
//   r[MAXACTIVE][:[GRP/]EVENT] PLACE [ARGS] return probe (also PLACE%return)
//   -:[GRP/]EVENT [PLACE [ARGS]]            delete (the event, or its probe points at PLACE)
//
//   PLACE: [BINARY:]SYMBOL[+|-OFFS] | BINARY:0xOFFSET[(REF_CTR_OFFSET)] | 0xADDR
//   ARGS:  [NAME=]FETCHARG[:TYPE]
//
// Errors carry the kernel's messages and caret columns (see parse_error.h), and the kernel's
// limits hold (14 memory reads and 63 characters per argument, 128 arguments). Deliberate
// differences from the kernel's uprobe parser (the README's "Kernel compatibility" table):
//   - symbolic places, @SYM[+|-OFFS], $argN (entry and return), the `symbol` type;
//   - the seed's aliases aN, sN, rv, rp, rN (rN: the Nth register of the ptrace register
//     block, see arch/register_abi.h);
//   - r[MAXACTIVE]:NAME keeps its event name (the kernel's uprobe parser drops it);
//   - text after the closing ')' of a dereference is refused (the kernel ignores it);
//   - arrays after a +u dereference are accepted (the kernel refuses them).
// The fetcharg grammar is fetcharg_parser.h's; a second definition of an event and
// "-:EVENT PLACE" follow the kernel in definition_list.h.
// Not supported: event probes ("e:"), BTF names for arguments, the %pd/%pD types.
//
// rN (the seed's "Nth register") counts words of the ptrace register block, the kernel's
// pt_regs order: on x86-64 the bare alias r8 is NOT %r8. Each architecture's order is its
// RegisterAbi::block_order (arch/x86/x86_register_abi.cpp, arch/arm64/arm64_register_abi.cpp).
#include <string_view>
#include <vector>

#include "insn/arch.h"
#include "probe/definition.h"
#include "probe/parse_error.h"

namespace xprobe::probe {

struct ParseOptions {
  insn::Arch arch = insn::Arch::X86_64;
};

ParseResult<ProbeDefinition> parse_definition(std::string_view text, const ParseOptions& options = {});

// A -f file: one definition per line; '#' starts a comment (as in uprobe_events, anywhere on
// the line); blank lines are skipped. The first error stops parsing and names its line.
ParseResult<std::vector<ProbeDefinition>> parse_definitions_file(std::string_view text,
                                                                 std::string_view file_name,
                                                                 const ParseOptions& options = {});

}  // namespace xprobe::probe
