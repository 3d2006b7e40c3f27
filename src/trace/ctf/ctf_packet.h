#pragma once
// The bytes of CTF packets as tsdl_metadata.h lays them out: events appended one by one to a
// packet under construction, then the packet with its header and context.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/ctf/tsdl_metadata.h"
#include "trace/event_record.h"

namespace xprobe::trace {

class CtfPacket {
 public:
  // One event of class `id` (its description: the field types to write the values as).
  void append(uint32_t id, const EventDescription& event, const EventRecord& record, int32_t pid);
  bool empty() const { return events_ == 0; }
  size_t size() const { return content_.size(); }
  uint64_t last_timestamp() const { return end_ns_; }
  // The whole packet (header, context, events); the packet is empty again after it.
  std::vector<uint8_t> take(const TraceUuid& uuid, uint32_t cpu);

 private:
  template <typename T>
  void put(T value);
  void put_sized(uint64_t value, unsigned bytes);
  void put_string(const std::string& text);

  std::vector<uint8_t> content_;
  uint64_t events_ = 0;
  uint64_t begin_ns_ = 0;
  uint64_t end_ns_ = 0;
};

}  // namespace xprobe::trace
