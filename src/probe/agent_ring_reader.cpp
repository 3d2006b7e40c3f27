#include "probe/agent_ring_reader.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "probe/agent/agent_abi.h"

namespace xprobe::probe {

using agent::AgentRingHeader;

AgentRingReader::AgentRingReader(Io io, uint64_t ring, uint64_t ring_size)
    : io_(std::move(io)), ring_(ring), ring_size_(ring_size) {}

void AgentRingReader::drain(uint32_t probe_count, const RecordSink& on_record, const LossSink& on_lost) {
  probe_count = std::min(probe_count, agent::kMaxProbes);
  // The header's first words (magic, ring_size, head, tail, pid) and the probes' drop
  // counters, in one read.
  constexpr size_t kControlWords = offsetof(AgentRingHeader, dropped) / 8;
  control_.assign(kControlWords + probe_count, 0);
  if (!io_.read(ring_, std::span(reinterpret_cast<uint8_t*>(control_.data()), control_.size() * 8))) return;
  if (control_[0] != agent::kRingMagic || control_[1] != ring_size_) return;  // gone (exec) or overwritten
  const uint64_t head = control_[2];
  // What the agent could not record (ring full). Counters only grow; a smaller value is the
  // program's scribbling and is ignored.
  dropped_seen_.resize(probe_count, 0);
  for (uint32_t i = 0; i < probe_count; ++i) {
    const uint64_t dropped = control_[kControlWords + i];
    if (dropped > dropped_seen_[i]) on_lost(i, dropped - dropped_seen_[i]);
    dropped_seen_[i] = std::max(dropped_seen_[i], dropped);
  }
  last_fill_ = head - tail_ > ring_size_ ? 0 : static_cast<double>(head - tail_) / static_cast<double>(ring_size_);
  if (head == tail_ || head - tail_ > ring_size_) return;  // nothing, or a head that cannot be
  const uint64_t pending = head - tail_;
  buffer_.resize(pending);
  const uint64_t start = tail_ & (ring_size_ - 1);
  const uint64_t first = std::min(pending, ring_size_ - start);
  const uint64_t base = ring_ + sizeof(AgentRingHeader);
  if (!io_.read(base + start, std::span(buffer_.data(), first))) return;
  if (first < pending && !io_.read(base, std::span(buffer_.data() + first, pending - first))) return;

  uint64_t at = 0;
  uint64_t freed = 0;  // the prefix of finished records
  bool prefix = true;
  while (pending - at >= 16) {
    uint64_t header = 0, position = 0;
    std::memcpy(&header, buffer_.data() + at, 8);
    std::memcpy(&position, buffer_.data() + at + 8, 8);
    const auto length = static_cast<uint32_t>(header & 0xffffffffu);
    const auto index = static_cast<uint32_t>((header >> 32) & 0xffffu);
    // A header from an earlier lap names another position: not written yet.
    const bool written = position == tail_ + at && length >= 16 && length % 8 == 0 && length <= pending - at;
    if (!written) break;
    if (index != agent::kPadProbe && index >= probe_count) break;  // not a record of ours
    if ((header & agent::kCommitted) == 0) {
      unfinished_[position] = index;
      prefix = false;
    } else {
      unfinished_.erase(position);
      if (index != agent::kPadProbe && !delivered_ahead_.count(position)) {
        on_record(index, std::span<const uint8_t>(buffer_.data() + at, length));
        if (!prefix) delivered_ahead_.insert(position);
      }
    }
    at += length;
    if (prefix) freed = at;
  }
  if (freed == 0) return;
  tail_ += freed;
  delivered_ahead_.erase(delivered_ahead_.begin(), delivered_ahead_.lower_bound(tail_));
  // Fails only when the process is gone; the agent then never needs the room again.
  (void)io_.write(ring_ + offsetof(AgentRingHeader, tail), std::span(reinterpret_cast<const uint8_t*>(&tail_), 8));
}

void AgentRingReader::abandon_unfinished(const LossSink& on_lost) {
  for (const auto& [position, index] : unfinished_) on_lost(index, 1);
  unfinished_.clear();
}

}  // namespace xprobe::probe
