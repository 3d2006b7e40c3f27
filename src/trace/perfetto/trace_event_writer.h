#pragma once
// The Trace Event Format (the JSON that ui.perfetto.dev, Perfetto's trace_processor and
// chrome://tracing load), streamed: a JSON array written event by event.
//
//   [
//   {"name":"process_name","ph":"M","pid":9559,"tid":9559,"args":{"name":"sample"}},
//   {"name":"thread_name","ph":"M","pid":9559,"tid":9559,"args":{"name":"sample"}},
//   {"name":"fib","cat":"demo","ph":"B","ts":441094151.000,"pid":9559,"tid":9559,"args":{"n":5}},
//   {"name":"fib","cat":"demo","ph":"E","ts":441094152.250,"pid":9559,"tid":9559,"args":{"rv":5}},
//   {"name":"write","cat":"demo","ph":"i","s":"t","ts":441094153.000,"pid":9559,"tid":9559,"args":{"fd":1}}
//   ]
//
// One track per thread, named (metadata events) when the thread is first seen or its comm
// changes. An entry event opens a slice ("B") when the catalog has a return probe at the same
// probe point; its return event closes it ("E", with the return's arguments). A return that
// finds its function's slice under others closes those first: they were unwound past
// (longjmp, an exception), and the engines' return matching reported no return for them.
// The events carry no stack pointer, so a call abandoned by a longjmp out of a recursion
// cannot be told from a live call of the same function: it stays open until a return of a
// function that encloses it (or the end), balanced but longer than it ran.
// Every other event is an instant event on its thread's track. Timestamps are microseconds
// (CLOCK_MONOTONIC), never decreasing on a thread. The only state is each thread's stack of
// open slices (bounded: a deeper entry becomes an instant event). end() closes what is still
// open and the array; the format also accepts an array cut short (an interrupted xprobe that
// never reached end()).
// Aggregations (--count, --hist, --latency, ...) are counter tracks of the traced process: one
// "C" event per track at each --interval and at the end, its series the keys or buckets:
//   {"name":"@visit","cat":"xprobe","ph":"C","ts":441095151.000,"pid":9559,"tid":9559,"args":{"0":812,"1":809}}
#include <memory>

#include "trace/output_format.h"

namespace xprobe::trace {

// Open slices a thread may have before further entries become instant events.
inline constexpr size_t kMaxOpenSlicesPerThread = 4096;

// The "perfetto" (and "chrome") output format (output_format.h).
std::unique_ptr<EventWriter> make_trace_event_writer(const FormatContext& context);

}  // namespace xprobe::trace
