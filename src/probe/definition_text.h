#pragma once
// A definition written back the way the kernel lists it in uprobe_events:
//   p:uprobes/zfree_entry /bin/zsh:0x0000000000046420 arg1=%ip arg2=%ax
// (file offsets as 0x%016lx on 64-bit, 0x%08lx on 32-bit; PLACE%return becomes "r:";
// unnamed arguments get their argN names). Symbolic and address places, which the kernel
// has no listing for, are written as given: "p:uprobes/malloc libc.so.6:malloc+0x10".
#include <string>

#include "probe/definition.h"

namespace xprobe::probe {

std::string to_uprobe_events_line(const ProbeDefinition& definition, unsigned word_size = 8);
// The place part of that line: "BINARY:0x%016lx[(0x%lx)]", or a symbolic place as written.
std::string to_uprobe_events_place(const ProbePlace& place, unsigned word_size = 8);
// An argument as listed: "NAME=FETCHARG[:TYPE]".
std::string to_uprobe_events_argument(const ProbeArgument& argument);

}  // namespace xprobe::probe
