#pragma once
// Reading a whole file the user named, safely: it must be a regular file (a directory, FIFO,
// socket or device is refused by name, without blocking on a FIFO or reading a device
// forever), no larger than a bound, and read with plain system calls so that nothing throws.
// The message says what the path is and why it cannot be used: "PATH: is a directory".
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/result.h"

namespace xprobe {

inline constexpr uint64_t kMaxReadFileSize = uint64_t{4} << 30;  // 4 GiB: no real object is larger

Result<std::vector<uint8_t>> read_regular_file(const std::string& path, uint64_t max_size = kMaxReadFileSize);

// Which file a path named when it was looked at: a later read can tell whether the path
// still names the same, unmodified file (not replaced, truncated or rewritten since).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t modified_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

// A descriptor open for reading on the regular file at `path` (refused as read_regular_file
// refuses it), and that file's identity. The caller closes it.
Result<int> open_regular_file(const std::string& path, FileIdentity& identity, uint64_t max_size = kMaxReadFileSize);
// The whole file, only if `path` still names the file `expected` describes.
Result<std::vector<uint8_t>> read_unchanged_regular_file(const std::string& path, const FileIdentity& expected);
Result<std::string> read_regular_text_file(const std::string& path, uint64_t max_size = kMaxReadFileSize);

}  // namespace xprobe
