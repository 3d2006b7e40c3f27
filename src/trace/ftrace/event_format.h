#pragma once
// An event's format file (tracefs events/GRP/EVENT/format) as the kernel writes it for a
// uprobe event: the common fields, the probe's address fields, one field per argument packed
// one after the other (the kernel does not align them), and the print fmt line.
#include <string>

#include "trace/event_record.h"

namespace xprobe::trace {

// `id`: the event's number (the ID line); `word_size`: the traced program's (4 or 8).
std::string kernel_event_format(const EventDescription& event, unsigned id, unsigned word_size = 8);

}  // namespace xprobe::trace
