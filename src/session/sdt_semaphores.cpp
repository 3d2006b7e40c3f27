#include "session/sdt_semaphores.h"

#include <array>
#include <cstring>
#include <fmt/format.h>

namespace xprobe::session {
namespace {

Status add(target::Memory& memory, uint64_t address, int delta) {
  std::array<uint8_t, 2> bytes{};
  if (auto read = memory.read(address, bytes); !read)
    return make_error(fmt::format("the SDT semaphore at {:#x}: {}", address, read.error().message));
  uint16_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  if (delta < 0 && value == 0) return {};  // the program reset it itself: never wrap to 65535
  value = static_cast<uint16_t>(value + delta);
  std::memcpy(bytes.data(), &value, sizeof value);
  return memory.write(address, bytes);
}

}  // namespace

Status SdtSemaphores::raise(target::Memory& memory, uint64_t address) {
  if (auto status = add(memory, address, +1); !status) return status;
  raised_.push_back(address);
  return {};
}

void SdtSemaphores::lower_all(target::Memory& memory) {
  for (uint64_t address : raised_) (void)add(memory, address, -1);
}

}  // namespace xprobe::session
