#include "trace/event_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace xprobe::trace {

namespace {
constexpr size_t kFlushThreshold = 64 * 1024;
constexpr uint64_t kFlushIntervalNs = 200'000'000;
}  // namespace

EventOutput::EventOutput(int fd, bool owns_fd, bool flush_each_event, trace::ProbeStatistics& statistics)
    : fd_(fd), owns_fd_(owns_fd), flush_each_event_(flush_each_event), statistics_(statistics) {
  buffer_.reserve(kFlushThreshold * 2);
}

EventOutput::~EventOutput() {
  flush();
  if (owns_fd_) close(fd_);
}

void EventOutput::write_text(std::string_view text) {
  // The events before it go first: flush() cuts what follows the last whole event it wrote,
  // which must never be this text (a trailer after the last event).
  flush();
  buffer_.append(text);
  flush();
}

void EventOutput::write_event(uint32_t probe_id, std::string_view line, uint64_t now_ns) {
  buffer_.append(line);
  pending_.emplace_back(buffer_.size(), probe_id);
  if (flush_each_event_ || buffer_.size() >= kFlushThreshold || now_ns - last_flush_ns_ > kFlushIntervalNs) {
    flush();
    last_flush_ns_ = now_ns;
  }
}

void EventOutput::flush() {
  size_t done = fd_ < 0 ? buffer_.size() : 0;  // no stream: the writer keeps its own files
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  size_t complete_end = 0;
  for (const auto& [end, probe_id] : pending_) {
    if (end <= done) {
      ++events_written_;
      complete_end = end;
    } else {
      statistics_.counters(probe_id).miss();
      statistics_.add_dropped(1);
    }
  }
  // A regular file must not end in half an event: cut the fragment a short write left.
  if (done > complete_end && !pending_.empty()) {
    struct stat st;
    if (fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      const off_t at = lseek(fd_, 0, SEEK_CUR);
      if (at >= 0 && ftruncate(fd_, at - static_cast<off_t>(done - complete_end)) == 0)
        lseek(fd_, at - static_cast<off_t>(done - complete_end), SEEK_SET);
    }
  }
  buffer_.clear();
  pending_.clear();
}

}  // namespace xprobe::trace
