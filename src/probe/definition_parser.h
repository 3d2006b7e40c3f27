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
//     block, see arch_registers.h);
//   - r[MAXACTIVE]:NAME keeps its event name (the kernel's uprobe parser drops it);
//   - text after the closing ')' of a dereference is refused (the kernel ignores it);
//   - arrays after a +u dereference are accepted (the kernel refuses them).
// The fetcharg grammar is fetcharg_parser.h's; a second definition of an event and
// "-:EVENT PLACE" follow the kernel in definition_list.h.
// Not supported: event probes ("e:"), BTF names for arguments, the %pd/%pD types.
//
// rN (the seed's "Nth register") counts words of the ptrace register block, the kernel's
// pt_regs order. So the bare alias r8 is NOT %r8:
//   x86-64: r0 r15, r1 r14, r2 r13, r3 r12, r4 bp, r5 bx, r6 r11, r7 r10, r8 r9, r9 r8,
//           r10 ax, r11 cx, r12 dx, r13 si, r14 di, r15 orig_ax, r16 ip, r17 cs, r18 flags,
//           r19 sp, r20 ss, r21 fs_base, r22 gs_base, r23 ds, r24 es, r25 fs, r26 gs
//   i386:   r0 bx, r1 cx, r2 dx, r3 si, r4 di, r5 bp, r6 ax, r7 ds, r8 es, r9 fs, r10 gs,
//           r11 orig_ax, r12 ip, r13 cs, r14 flags, r15 sp, r16 ss
//   arm64:  r0..r30 x0..x30, r31 sp, r32 pc, r33 pstate
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
