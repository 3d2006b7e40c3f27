#pragma once
// The ftrace `trace` file's text format, as the running kernel (6.x) prints it:
//
//   # tracer: nop
//   #
//   # entries-in-buffer/entries-written: 3/3   #P:2
//   #
//   #                                _-----=> irqs-off/BH-disabled
//   ...
//   #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
//   #              | |         |   |||||     |         |
//                  t-9559    [001] .....   441.094151: xpt: (0x55ef9f203149) a=5 s="x"
//                  t-9559    [001] .....   441.094192: xptr: (0x55ef9f2031a3 <- 0x55ef9f203149) rv=0x18
//
// With irq_info off (the kernel's options/irq-info = 0) the flags column and its legend go.
// The flags column is "....." because user space has no interrupt state to report.
#include <cstdint>
#include <memory>
#include <string>

#include "trace/event_record.h"
#include "trace/output_format.h"
#include "trace/value_format.h"

namespace xprobe::trace {

struct FtraceOptions {
  bool irq_info = true;  // the kernel's default
  // Print probe addresses the way kprobe events do, "(do_sys_open+0x0/0xd6)" and
  // "(sys_open+0x1b/0x1d <- do_sys_open)", instead of uprobe events' "(0x446420)".
  // Addresses the symbolizer does not know stay hexadecimal.
  bool symbolic_addresses = false;
};

std::string ftrace_header(uint64_t entries_in_buffer, uint64_t entries_written, unsigned cpus,
                          const FtraceOptions& options = {});

// One line, '\n' included. Unknown probe ids print as "probe<N>".
std::string format_ftrace_event(const EventRecord& record, const EventCatalog& catalog,
                                const Symbolizer& symbolizer = {}, const FtraceOptions& options = {});
// The same line appended to `out` (the writer's path: no string per event).
void append_ftrace_event(std::string& out, const EventRecord& record, const EventCatalog& catalog,
                         const Symbolizer& symbolizer = {}, const FtraceOptions& options = {});

// "%5lu.%06lu" of a nanosecond timestamp rounded to the microsecond, as the kernel does.
std::string format_timestamp(uint64_t timestamp_ns);

// The header of a stream of events: ftrace_header() without its entries line (a stream has no
// buffer whose fill it could state; the counts come at the end, in the profile).
std::string ftrace_stream_header(unsigned cpus, const FtraceOptions& options = {});

// The "ftrace" output format (output_format.h).
std::unique_ptr<EventWriter> make_ftrace_writer(const FormatContext& context);

}  // namespace xprobe::trace
