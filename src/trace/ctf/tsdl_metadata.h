#pragma once
// The TSDL text (CTF 1.8's metadata, in its plain-text form) that describes xprobe's CTF
// streams: one stream class, one clock (CLOCK_MONOTONIC in nanoseconds, as the events'
// timestamps), one event class per catalog entry with the event's arguments as typed fields.
//
// The layout both this text and the packets (ctf_packet.h) follow, every field byte aligned
// and in the host's byte order:
//   packet header:  u32 magic (0xC1FC1FC1), u8 uuid[16], u32 stream_id (0)
//   packet context: u64 timestamp_begin, u64 timestamp_end, u64 content_size, u64 packet_size
//                   (in bits), u32 cpu_id
//   event header:   u32 id (the catalog index), u64 timestamp
//   event context:  s32 pid (the process), s32 tid (ftrace's PID column), string comm
//   event fields:   entry events x64 __probe_ip, return events x64 __probe_func and
//                   x64 __probe_ret_ip (the kernel's names in a uprobe event's format file), then
//                   the arguments: u/s/x/bitfields integers of their size and signedness
//                   (x and symbol shown in base 16, char as an 8-bit integer), strings string,
//                   TYPE[N] fixed-length arrays.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/event_record.h"

namespace xprobe::trace {

using TraceUuid = std::array<uint8_t, 16>;

inline constexpr uint32_t kCtfMagic = 0xC1FC1FC1;

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string uuid_text(const TraceUuid& uuid);

// A field or event name as TSDL must spell it: readers drop one leading underscore (the escape
// for names that are TSDL keywords), so names that start with one or are keywords get one more.
std::string tsdl_identifier(std::string_view name);

std::string tsdl_metadata(const EventCatalog& catalog, const TraceUuid& uuid, std::string_view hostname);

}  // namespace xprobe::trace
