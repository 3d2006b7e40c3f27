#pragma once
// A fake thread and address space for fetch-program tests: registers by id, memory as a few
// mapped ranges; everything else faults.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "probe/fetch_interfaces.h"

namespace xprobe::probe::testing {

class FakeRegisters final : public RegisterView {
 public:
  uint64_t read(RegisterId id) const override {
    const auto found = values.find(id);
    return found == values.end() ? 0 : found->second;
  }
  std::map<RegisterId, uint64_t> values;
};

class FakeMemory final : public MemoryReader {
 public:
  void map(uint64_t address, std::vector<uint8_t> bytes) { ranges[address] = std::move(bytes); }
  void map_string(uint64_t address, const std::string& text) {
    std::vector<uint8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    map(address, std::move(bytes));
  }
  void map_u64(uint64_t address, std::vector<uint64_t> words) {
    std::vector<uint8_t> bytes(words.size() * 8);
    std::memcpy(bytes.data(), words.data(), bytes.size());
    map(address, std::move(bytes));
  }
  bool read(uint64_t address, std::span<uint8_t> out) override {
    ++reads;
    for (const auto& [start, bytes] : ranges) {
      if (address >= start && address - start <= bytes.size() && out.size() <= bytes.size() - (address - start)) {
        std::memcpy(out.data(), bytes.data() + (address - start), out.size());
        return true;
      }
    }
    return false;
  }
  // Byte-exact, as process_vm_readv reports a partial read.
  size_t read_up_to(uint64_t address, std::span<uint8_t> out) override {
    ++reads;
    for (const auto& [start, bytes] : ranges) {
      if (address >= start && address - start < bytes.size()) {
        const size_t available = std::min(out.size(), bytes.size() - static_cast<size_t>(address - start));
        std::memcpy(out.data(), bytes.data() + (address - start), available);
        return available;
      }
    }
    return 0;
  }
  std::map<uint64_t, std::vector<uint8_t>> ranges;
  int reads = 0;
};

}  // namespace xprobe::probe::testing
