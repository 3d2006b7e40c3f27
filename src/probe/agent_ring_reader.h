#pragma once
// The tracer's side of the agent's ring (layout in agent/agent_abi.h): reads what the traced
// process recorded, hands every committed record over once, and frees the space. The process
// is untrusted: a header or length that does not add up stops the reading instead of being
// believed.
//
// A record a thread reserved and has not finished yet (the thread is preempted or stopped,
// or was killed by another thread's exit) is stepped over: the records behind it are handed
// over now, it is handed over when it is finished, and the space is freed only up to it, so
// a late finish can never overwrite a newer record. When the process is gone (or the tracer
// leaves) the unfinished ones are counted as lost (abandon_unfinished).
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <vector>

namespace xprobe::probe {

class AgentRingReader {
 public:
  struct Io {
    std::function<bool(uint64_t address, std::span<uint8_t> out)> read;
    std::function<bool(uint64_t address, std::span<const uint8_t> bytes)> write;
  };
  using RecordSink = std::function<void(uint32_t probe_index, std::span<const uint8_t> record)>;
  using LossSink = std::function<void(uint32_t probe_index, uint64_t count)>;

  // `ring` is the address of the AgentRingHeader.
  AgentRingReader(Io io, uint64_t ring, uint64_t ring_size);

  // One pass over what is there now. Probe indexes >= probe_count are not ours: reading stops.
  void drain(uint32_t probe_count, const RecordSink& on_record, const LossSink& on_lost);

  // How full the ring was when the last drain began (0..1).
  double last_fill() const { return last_fill_; }

  // Records reserved and not finished at the last drain: count them as lost (the process
  // exited or is no longer traced).
  void abandon_unfinished(const LossSink& on_lost);

 private:
  Io io_;
  uint64_t ring_;
  uint64_t ring_size_;
  uint64_t tail_ = 0;
  double last_fill_ = 0;
  std::map<uint64_t, uint32_t> unfinished_;  // position -> probe index, beyond tail_
  std::set<uint64_t> delivered_ahead_;       // positions handed over but not freed yet
  std::vector<uint64_t> dropped_seen_;
  std::vector<uint8_t> buffer_;
  std::vector<uint64_t> control_;  // the header's words and the drop counters, as last read
};

}  // namespace xprobe::probe
