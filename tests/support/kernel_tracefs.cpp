#include "kernel_tracefs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <sstream>

namespace xprobe::testing {
namespace {

std::string find_tracefs() {
  for (const char* candidate : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
    if (access((std::string(candidate) + "/uprobe_events").c_str(), W_OK) == 0) return candidate;
  mkdir("/sys/kernel/tracing", 0755);
  if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
      access("/sys/kernel/tracing/uprobe_events", W_OK) == 0)
    return "/sys/kernel/tracing";
  return {};
}

// tracefs files take one write(2) per command; iostreams may seek or split writes.
bool write_once(const std::string& path, const std::string& text, bool append, int* error = nullptr) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
  if (fd < 0) {
    if (error) *error = errno;
    return false;
  }
  const ssize_t written = ::write(fd, text.data(), text.size());
  if (error) *error = written < 0 ? errno : 0;
  ::close(fd);
  return written == static_cast<ssize_t>(text.size());
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string defined_event(const std::string& definition) {
  const size_t colon = definition.find(':');
  const size_t space = definition.find_first_of(" \t");
  if (colon == std::string::npos || (space != std::string::npos && colon > space)) return {};
  std::string name = definition.substr(colon + 1, space == std::string::npos ? std::string::npos : space - colon - 1);
  if (name.empty()) return {};
  // "p:EVENT" puts the event in the kernel's default group for uprobes.
  if (name.find('/') == std::string::npos) name = "uprobes/" + name;
  return name;
}

std::unique_ptr<KernelTracefs> KernelTracefs::open(std::string* why_not) {
  if (geteuid() != 0) {
    if (why_not) *why_not = "not root: the kernel's uprobe_events needs root";
    return nullptr;
  }
  const int lock_fd = ::open(kLockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX) != 0) {
    if (why_not) *why_not = std::string("cannot lock ") + kLockPath;
    if (lock_fd >= 0) ::close(lock_fd);
    return nullptr;
  }
  std::string root = find_tracefs();
  if (root.empty()) {
    if (why_not) *why_not = "tracefs with uprobe_events is not available";
    ::close(lock_fd);
    return nullptr;
  }
  static std::atomic<unsigned> serial{0};
  std::string instance = root + "/instances/xprobe-test-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
  if (mkdir(instance.c_str(), 0755) != 0 && errno != EEXIST) {
    if (why_not) *why_not = "cannot create the tracefs instance " + instance;
    ::close(lock_fd);
    return nullptr;
  }
  return std::unique_ptr<KernelTracefs>(new KernelTracefs(lock_fd, std::move(root), std::move(instance)));
}

KernelTracefs::KernelTracefs(int lock_fd, std::string root, std::string instance)
    : lock_fd_(lock_fd), root_(std::move(root)), instance_(std::move(instance)) {}

KernelTracefs::~KernelTracefs() {
  for (const std::string& group : enabled_groups_) enable_group(group, false);
  for (auto it = defined_.rbegin(); it != defined_.rend(); ++it) write_once(root_ + "/uprobe_events", "-:" + *it + "\n", true);
  rmdir(instance_.c_str());
  ::close(lock_fd_);  // releases the flock
}

bool KernelTracefs::define(const std::string& definition, int* error) {
  const bool accepted = write_once(root_ + "/uprobe_events", definition + "\n", true, error);
  const std::string name = defined_event(definition);
  if (accepted && !name.empty() && definition[0] != '-' &&
      std::find(defined_.begin(), defined_.end(), name) == defined_.end())
    defined_.push_back(name);
  return accepted;
}

bool KernelTracefs::undefine(const std::string& group_event) {
  write_once(instance_ + "/events/" + group_event + "/enable", "0", false);
  std::erase(defined_, group_event);
  return write_once(root_ + "/uprobe_events", "-:" + group_event + "\n", true);
}

std::string KernelTracefs::error_log() const { return read_all(root_ + "/error_log"); }

bool KernelTracefs::set_filter(const std::string& group_event, const std::string& filter, std::string* readback) {
  const std::string path = instance_ + "/events/" + group_event + "/filter";
  // A refused write leaves the old filter in place: clear it first, so the readback is this one's.
  write_once(path, "0", false);
  const bool accepted = write_once(path, filter, false);
  if (readback) *readback = read_all(path);
  return accepted;
}

bool KernelTracefs::enable_group(const std::string& group, bool on) {
  if (on && std::find(enabled_groups_.begin(), enabled_groups_.end(), group) == enabled_groups_.end())
    enabled_groups_.push_back(group);
  return write_once(instance_ + "/events/" + group + "/enable", on ? "1" : "0", false);
}

bool KernelTracefs::set_buffer_size_kb(unsigned kb) {
  return write_once(instance_ + "/buffer_size_kb", std::to_string(kb), false);
}

void KernelTracefs::clear_trace() { write_once(instance_ + "/trace", "", false); }

std::string KernelTracefs::trace() const { return read_all(instance_ + "/trace"); }

}  // namespace xprobe::testing
