#include "support/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

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
  int get() const { return fd_; }

 private:
  int fd_;
};

template <typename Bytes>
Result<Bytes> read_file(const std::string& path, uint64_t max_size) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return make_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return make_error(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) return make_error(fmt::format("{}: {}", path, not_regular(info.st_mode)));
  const auto size = static_cast<uint64_t>(info.st_size);
  if (size > max_size) {
    return make_error(fmt::format("{}: too large ({} bytes; at most {} are read)", path, size, max_size));
  }
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

Result<std::string> read_regular_text_file(const std::string& path, uint64_t max_size) {
  return read_file<std::string>(path, max_size);
}

}  // namespace xprobe
