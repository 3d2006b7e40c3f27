// The fetch-program interpreter. Every read goes through MemoryReader and may fail: the
// traced process is untrusted, so a bad pointer becomes a recorded fault, never a crash.
#include <algorithm>
#include <array>
#include <cstring>

#include "probe/fetch_program.h"

namespace xprobe::probe {
namespace {

constexpr uint64_t kPageSize = 4096;

uint64_t little_endian(std::span<const uint8_t> bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i > 0; --i) value = (value << 8) | bytes[i - 1];
  return value;
}

uint64_t truncate(uint64_t value, unsigned size) {
  return size >= 8 ? value : value & ((uint64_t{1} << (size * 8)) - 1);
}

uint64_t finish_element(uint64_t raw, const FetchType& type) {
  raw = truncate(raw, type.size);
  if (type.kind == TypeKind::Bitfield && type.bit_width != 0) {
    const uint64_t mask = type.bit_width >= 64 ? ~uint64_t{0} : (uint64_t{1} << type.bit_width) - 1;
    raw = (raw >> type.bit_offset) & mask;
  }
  return raw;
}

// A NUL-terminated string of at most kMaxStringSize bytes with its NUL; longer ones are cut
// to kMaxStringSize - 1 bytes, as the kernel's strncpy_from_user-based fetch does. Reads
// start small and double (most strings are short; each read may be a system call), never
// crossing a page boundary in one read.
std::optional<std::string> read_string(MemoryReader& memory, uint64_t address) {
  constexpr size_t kFirstRead = 256;
  std::array<uint8_t, kMaxStringSize> buffer;  // NOLINT: filled before use
  size_t want = kFirstRead;
  size_t done = 0;
  while (done < buffer.size()) {
    const uint64_t here = address + done;
    const size_t chunk = static_cast<size_t>(
        std::min<uint64_t>({kPageSize - here % kPageSize, buffer.size() - done, static_cast<uint64_t>(want)}));
    const size_t got = std::min(chunk, memory.read_up_to(here, std::span<uint8_t>(buffer).subspan(done, chunk)));
    const auto* begin = buffer.data() + done;
    const auto* nul = std::find(begin, begin + got, uint8_t{0});
    if (nul != begin + got) {
      return std::string(reinterpret_cast<const char*>(buffer.data()), static_cast<size_t>(nul - buffer.data()));
    }
    done += got;
    if (got < chunk) return std::nullopt;
    want *= 2;
  }
  return std::string(reinterpret_cast<const char*>(buffer.data()), buffer.size() - 1);
}

class Interpreter {
 public:
  Interpreter(const FetchProgram& program, const FetchEnvironment& environment)
      : program_(program), environment_(environment),
        mask_(program.word_size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (program.word_size * 8)) - 1) {}

  FetchedValue run() {
    result_.type = program_.type;
    uint64_t value = 0;
    for (const FetchInstruction& instruction : program_.code) {
      if (!step(instruction, value)) return faulted();
    }
    return std::move(result_);
  }

 private:
  size_t element_count() const { return std::max<size_t>(1, program_.type.array_count); }

  FetchedValue faulted() {
    result_.fault = true;
    if (program_.type.is_string()) {
      result_.strings.assign(element_count(), std::nullopt);
      result_.numbers.clear();
    } else {
      result_.numbers.assign(element_count(), 0);
      result_.strings.clear();
    }
    return std::move(result_);
  }

  bool read_word(uint64_t address, uint64_t& out) {
    std::array<uint8_t, 8> bytes{};
    const std::span<uint8_t> word(bytes.data(), program_.word_size);
    if (!environment_.memory.read(address & mask_, word)) return false;
    out = little_endian(word);
    return true;
  }

  bool step(const FetchInstruction& instruction, uint64_t& value) {
    switch (instruction.op) {
      case FetchOp::LoadRegister: value = environment_.registers.read(instruction.reg) & mask_; return true;
      case FetchOp::LoadStackEntry: {
        const uint64_t sp = environment_.registers.read(program_.stack_pointer);
        return read_word((sp + static_cast<uint64_t>(instruction.operand) * program_.word_size) & mask_, value);
      }
      case FetchOp::LoadSavedArgument: {
        const auto index = static_cast<size_t>(instruction.operand - 1);
        if (index >= environment_.saved_arguments.size()) return false;
        value = environment_.saved_arguments[index] & mask_;
        return true;
      }
      case FetchOp::LoadReturnAddress:
        if (!environment_.return_address) return false;
        value = *environment_.return_address & mask_;
        return true;
      case FetchOp::LoadImmediate: value = static_cast<uint64_t>(instruction.operand) & mask_; return true;
      case FetchOp::LoadRelocation: {
        const auto index = static_cast<size_t>(instruction.operand);
        if (index >= program_.relocations.size() || !program_.relocations[index].address) return false;
        value = *program_.relocations[index].address & mask_;
        return true;
      }
      case FetchOp::Deref: return read_word((value + static_cast<uint64_t>(instruction.operand)) & mask_, value);
      case FetchOp::AddOffset: value = (value + static_cast<uint64_t>(instruction.operand)) & mask_; return true;
      case FetchOp::StoreRaw: result_.numbers = {finish_element(value, program_.type)}; return true;
      case FetchOp::StoreMemory: return store_memory(value);
      case FetchOp::StoreString: return store_string(value);
      case FetchOp::StoreComm:
        result_.strings = {std::string(environment_.comm.substr(0, kMaxStringSize - 1))};
        return true;
      case FetchOp::StoreImmediateString: {
        const auto index = static_cast<size_t>(instruction.operand);
        if (index >= program_.strings.size()) return false;
        result_.strings = {program_.strings[index]};
        return true;
      }
    }
    return false;
  }

  bool store_memory(uint64_t address) {
    const size_t count = element_count();
    const size_t size = program_.type.size;
    std::vector<uint8_t> bytes(size * count);
    if (!environment_.memory.read(address, bytes)) return false;
    result_.numbers.clear();
    for (size_t i = 0; i < count; ++i) {
      result_.numbers.push_back(finish_element(little_endian(std::span<const uint8_t>(bytes).subspan(i * size, size)), program_.type));
    }
    return true;
  }

  bool store_string(uint64_t address) {
    result_.strings.clear();
    if (program_.type.array_count == 0) {
      auto text = read_string(environment_.memory, address);
      if (!text) return false;
      result_.strings.push_back(std::move(text));
      return true;
    }
    // string[N]: N char* at the address.
    for (size_t i = 0; i < program_.type.array_count; ++i) {
      uint64_t pointer = 0;
      if (!read_word((address + i * program_.word_size) & mask_, pointer)) return false;
      auto text = read_string(environment_.memory, pointer);
      if (!text) result_.fault = true;
      result_.strings.push_back(std::move(text));
    }
    return true;
  }

  const FetchProgram& program_;
  const FetchEnvironment& environment_;
  uint64_t mask_;
  FetchedValue result_;
};

}  // namespace

FetchedValue run(const FetchProgram& program, const FetchEnvironment& environment) {
  return Interpreter(program, environment).run();
}

std::vector<FetchedValue> run_all(const ProbeFetchPlan& plan, const FetchEnvironment& environment) {
  std::vector<FetchedValue> values;
  values.reserve(plan.arguments.size());
  for (const FetchProgram& program : plan.arguments) values.push_back(run(program, environment));
  return values;
}

std::vector<uint64_t> capture_entry_arguments(const ProbeFetchPlan& plan, const RegisterView& registers,
                                              MemoryReader& memory) {
  unsigned highest = 0;
  for (const auto& [number, program] : plan.entry_captures) highest = std::max(highest, number);
  std::vector<uint64_t> saved(highest, 0);
  const FetchEnvironment environment{registers, memory, {}, std::nullopt, {}};
  for (const auto& [number, program] : plan.entry_captures) {
    const FetchedValue value = run(program, environment);
    if (!value.fault && !value.numbers.empty()) saved[number - 1] = value.numbers[0];
  }
  return saved;
}

}  // namespace xprobe::probe
