#include "session/live_fetch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "arch/register_block.h"

namespace xprobe::session {

uint64_t PtraceRegisterView::read(probe::RegisterId id) const { return arch::register_word(registers_.raw, arch_, id); }

bool ProcessMemoryReader::read(uint64_t address, std::span<uint8_t> out) { return memory_.read(address, out).ok(); }

size_t ProcessMemoryReader::read_up_to(uint64_t address, std::span<uint8_t> out) {
  target::ReadRequest request{address, out, 0};
  if (!memory_.read_batch(std::span<target::ReadRequest>(&request, 1)).ok()) return 0;
  return request.copied;
}

const std::string& CommCache::comm(pid_t tid) {
  auto it = names_.find(tid);
  if (it != names_.end()) return it->second;
  std::string name;
  // /proc/TID works for every thread, also those of a followed fork child.
  std::ifstream in(fmt::format("/proc/{}/comm", tid));
  std::getline(in, name);
  if (name.empty()) name = "<...>";  // the kernel's placeholder for an unknown comm
  return names_[tid] = name;
}

CpuReader::~CpuReader() { forget_all(); }

void CpuReader::forget_all() {
  for (auto& [tid, fd] : fds_) close(fd);
  fds_.clear();
}

void CpuReader::forget(pid_t tid) {
  auto it = fds_.find(tid);
  if (it == fds_.end()) return;
  close(it->second);
  fds_.erase(it);
}

uint32_t CpuReader::cpu(pid_t tid) {
  auto it = fds_.find(tid);
  if (it == fds_.end()) {
    const int fd = open(fmt::format("/proc/{}/stat", tid).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    it = fds_.emplace(tid, fd).first;
  }
  char buffer[1024];
  const ssize_t n = pread(it->second, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return 0;
  buffer[n] = '\0';
  // The comm field (2) is parenthesised and may hold spaces: count fields after the last ')'.
  const char* p = std::strrchr(buffer, ')');
  if (p == nullptr) return 0;
  int field = 2;
  for (; *p != '\0'; ++p) {
    if (*p == ' ' && ++field == 39) return static_cast<uint32_t>(std::strtoul(p + 1, nullptr, 10));
  }
  return 0;
}

}  // namespace xprobe::session
