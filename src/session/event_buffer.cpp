#include "session/event_buffer.h"

#include <chrono>

namespace xprobe::session {

void EventBuffer::fit(size_t incoming) {
  while (!lines_.empty() && bytes_ + incoming > capacity_) {
    bytes_ -= lines_.front().size();
    lines_.pop_front();
    ++overwritten_;
    ++overrun_;
  }
}

void EventBuffer::push(std::string_view line) {
  {
    std::lock_guard lock(mutex_);
    if (!recording_) return;
    if (line.size() > capacity_) {  // would not fit even alone
      ++overwritten_;
      ++overrun_;
      return;
    }
    fit(line.size());
    lines_.emplace_back(line);
    bytes_ += line.size();
  }
  arrived_.notify_all();
}

std::string EventBuffer::snapshot() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out.reserve(bytes_);
  for (const std::string& line : lines_) out += line;
  return out;
}

EventBuffer::Snapshot EventBuffer::snapshot_with_counts() const {
  std::lock_guard lock(mutex_);
  Snapshot snapshot;
  snapshot.text.reserve(bytes_);
  for (const std::string& line : lines_) snapshot.text += line;
  snapshot.entries = lines_.size();
  snapshot.written = lines_.size() + overrun_;
  return snapshot;
}

void EventBuffer::set_recording(bool on) {
  std::lock_guard lock(mutex_);
  recording_ = on;
}

bool EventBuffer::recording() const {
  std::lock_guard lock(mutex_);
  return recording_;
}

void EventBuffer::clear() {
  std::lock_guard lock(mutex_);
  lines_.clear();
  bytes_ = 0;
  overrun_ = 0;
}

std::string EventBuffer::take(const std::function<bool()>& give_up, unsigned poll_ms) {
  std::unique_lock lock(mutex_);
  while (lines_.empty() && !closed_) {
    arrived_.wait_for(lock, std::chrono::milliseconds(poll_ms));
    if (lines_.empty() && give_up && give_up()) return {};
  }
  std::string out;
  out.reserve(bytes_);
  for (const std::string& line : lines_) out += line;
  lines_.clear();
  bytes_ = 0;
  return out;
}

void EventBuffer::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  arrived_.notify_all();
}

bool EventBuffer::empty() const {
  std::lock_guard lock(mutex_);
  return lines_.empty();
}

size_t EventBuffer::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

void EventBuffer::set_capacity(size_t bytes) {
  std::lock_guard lock(mutex_);
  capacity_ = bytes;
  fit(0);
}

uint64_t EventBuffer::overwritten() const {
  std::lock_guard lock(mutex_);
  return overwritten_;
}

}  // namespace xprobe::session
