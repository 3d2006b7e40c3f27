#include "support/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include <fmt/format.h>

namespace xprobe {
namespace {

const char* not_regular(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  return "is not a regular file";
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

FileIdentity identity_of(const struct stat& info) {
  return FileIdentity{static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino),
                      static_cast<uint64_t>(info.st_size),
                      static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec};
}

// Opens `path` for reading and checks that it is a regular file of at most `max_size` bytes.
Result<struct stat> open_regular(const std::string& path, uint64_t max_size, FileDescriptor& fd) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
  fd = FileDescriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return make_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return make_error(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) return make_error(fmt::format("{}: {}", path, not_regular(info.st_mode)));
  const auto size = static_cast<uint64_t>(info.st_size);
  if (size > max_size) {
    return make_error(fmt::format("{}: too large ({} bytes; at most {} are read)", path, size, max_size));
  }
  return info;
}

template <typename Bytes>
Result<Bytes> read_file(const std::string& path, uint64_t max_size, const FileIdentity* expected = nullptr) {
  FileDescriptor fd(-1);
  auto info = open_regular(path, max_size, fd);
  if (!info) return info.error();
  if (expected != nullptr && identity_of(*info) != *expected)
    return make_error(fmt::format("{}: replaced or modified since it was first read", path));
  const auto size = static_cast<uint64_t>(info->st_size);
  Bytes bytes;
  try {
    bytes.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return make_error(fmt::format("{}: cannot allocate {} bytes to read it", path, size));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::pread(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return make_error(fmt::format("{}: read error: {}", path, std::strerror(errno)));
    if (got == 0) {
      // Truncated since fstat (replaced or rewritten while xprobe reads it).
      return make_error(fmt::format("{}: changed while being read ({} of {} bytes)", path, done, bytes.size()));
    }
    done += static_cast<size_t>(got);
  }
  return bytes;
}

}  // namespace

Result<std::vector<uint8_t>> read_regular_file(const std::string& path, uint64_t max_size) {
  return read_file<std::vector<uint8_t>>(path, max_size);
}

Result<int> open_regular_file(const std::string& path, FileIdentity& identity, uint64_t max_size) {
  FileDescriptor fd(-1);
  auto info = open_regular(path, max_size, fd);
  if (!info) return info.error();
  identity = identity_of(*info);
  return fd.release();
}

Result<std::vector<uint8_t>> read_unchanged_regular_file(const std::string& path, const FileIdentity& expected) {
  return read_file<std::vector<uint8_t>>(path, kMaxReadFileSize, &expected);
}

Result<std::string> read_regular_text_file(const std::string& path, uint64_t max_size) {
  return read_file<std::string>(path, max_size);
}

}  // namespace xprobe
