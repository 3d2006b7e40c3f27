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
Result<std::string> read_regular_text_file(const std::string& path, uint64_t max_size = kMaxReadFileSize);

}  // namespace xprobe
