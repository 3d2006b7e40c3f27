#include "probe/user_stack.h"

#include <cstring>

namespace xprobe::probe {

std::vector<uint64_t> walk_user_stack(const arch::ProbeArch& arch, const arch::RegisterBlock& registers, bool at_entry,
                                      const ReadWords& read) {
  std::vector<uint64_t> frames;
  const unsigned word = arch.stack_word_bytes();
  frames.push_back(arch.instruction_pointer(registers));
  if (at_entry) {
    struct Reader final : arch::ProbeMemory {
      const ReadWords& words;
      explicit Reader(const ReadWords& from) : words(from) {}
      Status read(uint64_t address, std::span<uint8_t> bytes) override {
        if (!words(address, bytes)) return make_error("unreadable");
        return {};
      }
      Status write(uint64_t, std::span<const uint8_t>) override { return make_error("read only"); }
    } memory(read);
    const auto returned = arch.return_address_at_entry(registers, memory);
    if (!returned || *returned == 0) return frames;
    frames.push_back(*returned);
  }
  uint64_t fp = arch.frame_pointer(registers);
  uint64_t floor = arch.stack_pointer(registers);
  while (frames.size() < kUserStackDepth) {
    if (fp == 0 || fp % word != 0 || fp < floor) break;
    uint8_t bytes[16] = {};
    if (!read(fp, std::span(bytes, 2 * word))) break;
    uint64_t next = 0, returned = 0;
    std::memcpy(&next, bytes, word);
    std::memcpy(&returned, bytes + word, word);
    if (returned == 0) break;
    frames.push_back(returned);
    if (next <= fp) break;  // the chain must go up the stack
    floor = fp + 2 * word;
    fp = next;
  }
  return frames;
}

}  // namespace xprobe::probe
