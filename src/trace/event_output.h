#pragma once
// Where formatted events go: a file descriptor written with write(2) from our own buffer, so
// that every event is either in the output or counted as dropped (a miss of its probe), even
// when the disk fills up or the reader of a pipe goes away. stdio would lose a failed flush's
// events without telling anyone.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/probe_statistics.h"

namespace xprobe::trace {

class EventOutput {
 public:
  // `fd` -1: no stream (a format that writes a directory of its own files); the events count
  // as written. `flush_each_event`: a terminal sees every event at once; otherwise the buffer is written
  // when full and at least every 200 ms.
  EventOutput(int fd, bool owns_fd, bool flush_each_event, trace::ProbeStatistics& statistics);
  ~EventOutput();
  EventOutput(const EventOutput&) = delete;
  EventOutput& operator=(const EventOutput&) = delete;

  void write_text(std::string_view text);  // the header: not an event
  void write_event(uint32_t probe_id, std::string_view line, uint64_t now_ns);
  void flush();
  uint64_t events_written() const { return events_written_; }

 private:
  int fd_;
  bool owns_fd_;
  bool flush_each_event_;
  trace::ProbeStatistics& statistics_;
  std::string buffer_;
  std::vector<std::pair<size_t, uint32_t>> pending_;  // (end offset in buffer_, probe) per buffered event
  uint64_t events_written_ = 0;
  uint64_t last_flush_ns_ = 0;
};

}  // namespace xprobe::trace
