#pragma once
// The CTF 1.8 output format: a trace directory that babeltrace2 and Trace Compass read.
//
//   DIR/metadata     TSDL text (tsdl_metadata.h): the clock, the stream, one event class per
//                    probe event with its arguments as typed fields
//   DIR/stream_CPU   the events that ran on CPU, in packets of about 64 KiB (ctf_packet.h)
//
// Events are written as they come: a stream holds one packet under construction, written
// when it is full and at end(). Probes can be added while tracing (a library dlopen'ed
// later), so the metadata is rewritten (a new file renamed over the old) before any packet
// with an event class it does not declare yet goes to disk, and at end(): the directory on
// disk is a readable trace at every moment, missing at most each stream's last packet.
#include <memory>
#include <string>

#include "support/result.h"
#include "trace/output_format.h"

namespace xprobe::trace {

inline constexpr size_t kCtfPacketBytes = 64 * 1024;

// Makes `path` ready to hold a trace: created when missing; an existing directory must be
// empty or hold only an earlier trace of this format (its files are removed). An error names
// the problem: an existing file that is not a directory, a directory with other files.
Status prepare_ctf_directory(const std::string& path);

// The "ctf" output format (output_format.h): writes into context.directory, nothing to `out`.
std::unique_ptr<EventWriter> make_ctf_writer(const FormatContext& context);

}  // namespace xprobe::trace
