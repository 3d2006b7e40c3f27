#pragma once
// The machine's own tracefs as a test oracle, shared safely. uprobe_events and error_log are
// machine-wide, so a KernelTracefs holds a machine-wide lock (flock on kLockPath) for its whole
// life: suites run from several checkouts at once take turns instead of deleting each other's
// events. Events are enabled and read in a tracefs instance of this object's own
// (instances/xprobe-test-PID-N), so the global buffer and tracing_on are never touched. On
// destruction it disables and deletes exactly the events it defined, then its instance.
#include <memory>
#include <string>
#include <vector>

namespace xprobe::testing {

class KernelTracefs {
 public:
  static constexpr const char* kLockPath = "/run/lock/xprobe-kernel-tracefs.lock";

  // nullptr (with the reason in `why_not`) when not root or no tracefs with uprobe_events.
  // Blocks while another holder of the lock is using the kernel's tracefs.
  static std::unique_ptr<KernelTracefs> open(std::string* why_not);
  ~KernelTracefs();
  KernelTracefs(const KernelTracefs&) = delete;
  KernelTracefs& operator=(const KernelTracefs&) = delete;

  const std::string& root() const { return root_; }
  const std::string& instance() const { return instance_; }

  // One write(2) of `definition` + "\n" to uprobe_events (O_APPEND, as `echo >>` does).
  // Accepted definitions are deleted again by the destructor. On refusal `error` gets errno.
  bool define(const std::string& definition, int* error = nullptr);
  // Writes "-:GROUP/EVENT" (disabling it in the instance first).
  bool undefine(const std::string& group_event);
  std::string error_log() const;
  // Writes `filter` to the instance's events/GROUP/EVENT/filter; `readback` (if given) gets
  // what the file shows then (the filter, or the kernel's error block). False when refused.
  bool set_filter(const std::string& group_event, const std::string& filter, std::string* readback = nullptr);

  // In the instance: enables every event of `group`, sets its buffer size, clears or reads it.
  bool enable_group(const std::string& group, bool on = true);
  bool set_buffer_size_kb(unsigned kb);
  void clear_trace();
  std::string trace() const;

 private:
  KernelTracefs(int lock_fd, std::string root, std::string instance);
  int lock_fd_;
  std::string root_;
  std::string instance_;
  std::vector<std::string> defined_;   // GROUP/EVENT, in definition order
  std::vector<std::string> enabled_groups_;
};

// The GROUP/EVENT a definition line names ("p:g/e ...", "r:g/e ...", "p:e ..."), or "" when it
// names none (the kernel then derives one; such definitions are not cleaned up by name).
std::string defined_event(const std::string& definition);

}  // namespace xprobe::testing
