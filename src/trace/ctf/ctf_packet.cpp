#include "trace/ctf/ctf_packet.h"

#include <algorithm>
#include <cstring>

namespace xprobe::trace {
namespace {

template <typename T>
void put_into(std::vector<uint8_t>& out, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // the host's byte order, as the metadata says
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

}  // namespace

template <typename T>
void CtfPacket::put(T value) {
  put_into(content_, value);
}

void CtfPacket::put_sized(uint64_t value, unsigned bytes) {
  switch (bytes) {
    case 1: put(static_cast<uint8_t>(value)); break;
    case 2: put(static_cast<uint16_t>(value)); break;
    case 4: put(static_cast<uint32_t>(value)); break;
    default: put(value); break;
  }
}

void CtfPacket::put_string(const std::string& text) {
  // NUL ends a CTF string: one inside (the values are NUL-free, but never trust that) would
  // shift every field after it.
  const size_t length = std::min(text.size(), text.find('\0'));
  content_.insert(content_.end(), text.begin(), text.begin() + static_cast<std::ptrdiff_t>(length));
  content_.push_back(0);
}

void CtfPacket::append(uint32_t id, const EventDescription& event, const EventRecord& record, int32_t pid) {
  // A stream's timestamps never go back (records of the two engines may come a little out of
  // order): a later event keeps its predecessor's time.
  const uint64_t timestamp = std::max(record.timestamp_ns, end_ns_);
  if (events_ == 0) begin_ns_ = timestamp;
  end_ns_ = timestamp;
  ++events_;
  put(id);
  put(timestamp);
  put(pid);
  put(static_cast<int32_t>(record.tid));
  put_string(record.comm);
  if (event.is_return) {
    put(record.function_address.value_or(0));
    put(record.address);
  } else {
    put(record.address);
  }
  for (size_t i = 0; i < event.argument_types.size(); ++i) {
    const probe::FetchType& type = event.argument_types[i];
    const probe::FetchedValue* value = i < record.values.size() ? &record.values[i] : nullptr;
    const size_t count = type.is_array() ? type.array_count : 1;
    for (size_t element = 0; element < count; ++element) {
      if (type.is_string()) {
        const bool present = value && element < value->strings.size();
        put_string(!present ? std::string() : value->strings[element] ? *value->strings[element] : "(fault)");
      } else {
        const bool present = value && element < value->numbers.size();
        put_sized(present ? value->numbers[element] : 0, type.size);
      }
    }
  }
}

std::vector<uint8_t> CtfPacket::take(const TraceUuid& uuid, uint32_t cpu) {
  std::vector<uint8_t> packet;
  const size_t header_bytes = 4 + 16 + 4 + 8 * 4 + 4;
  packet.reserve(header_bytes + content_.size());
  put_into(packet, kCtfMagic);
  packet.insert(packet.end(), uuid.begin(), uuid.end());
  put_into(packet, uint32_t{0});  // stream_id
  const uint64_t bits = (header_bytes + content_.size()) * 8;
  put_into(packet, begin_ns_);
  put_into(packet, end_ns_);
  put_into(packet, bits);  // content_size
  put_into(packet, bits);  // packet_size: no padding
  put_into(packet, cpu);
  packet.insert(packet.end(), content_.begin(), content_.end());
  content_.clear();
  events_ = 0;
  begin_ns_ = end_ns_;  // the next packet starts no earlier than this one ended
  return packet;
}

}  // namespace xprobe::trace
