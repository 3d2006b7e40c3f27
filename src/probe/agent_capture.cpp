#include "probe/agent_capture.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "probe/arch_registers.h"

namespace xprobe::probe {

using agent::AgentOp;

namespace {

constexpr uint32_t kMaxStringArray = 16;  // the agent's limit

uint32_t chunk_bytes(uint32_t payload) { return agent::kChunkHeaderBytes + ((payload + 7u) & ~7u); }

AgentOp op(agent::AgentOpCode code, int64_t operand = 0, uint8_t reg = 0, uint32_t size = 0) {
  return AgentOp{code, reg, 0, size, operand};
}

// `capture.ops` gets the program's ops; `save` (entry of a return probe): the value is saved
// in that frame word instead of being recorded.
Status compile_program(const FetchProgram& program, AgentCapture& capture, uint64_t& record_bytes,
                       std::optional<uint8_t> save = std::nullopt) {
  if (program.word_size != 8) return make_error("only 64-bit processes");
  for (const FetchInstruction& instruction : program.code) {
    switch (instruction.op) {
      case FetchOp::LoadRegister:
        if (instruction.reg >= agent::kSavedRegisterWords || (agent::kUnsavedRegisterMask >> instruction.reg) & 1)
          return make_error(fmt::format("argument {}: the trampoline does not save that register", program.name));
        capture.register_mask |= uint64_t{1} << instruction.reg;
        capture.ops.push_back(op(agent::kOpRegister, 0, static_cast<uint8_t>(instruction.reg)));
        break;
      case FetchOp::LoadStackEntry:
        capture.register_mask |= uint64_t{1} << program.stack_pointer;
        capture.ops.push_back(op(agent::kOpRegister, 0, static_cast<uint8_t>(program.stack_pointer)));
        capture.ops.push_back(op(agent::kOpAdd, instruction.operand * 8));
        capture.ops.push_back(op(agent::kOpDeref));
        record_bytes += chunk_bytes(8);
        break;
      case FetchOp::LoadImmediate: capture.ops.push_back(op(agent::kOpImmediate, instruction.operand)); break;
      case FetchOp::LoadRelocation: {
        const auto index = static_cast<size_t>(instruction.operand);
        if (index >= program.relocations.size() || !program.relocations[index].address)
          return make_error(fmt::format("argument {}: unresolved address", program.name));
        capture.ops.push_back(op(agent::kOpImmediate, static_cast<int64_t>(*program.relocations[index].address)));
        break;
      }
      case FetchOp::LoadSavedArgument: {
        if (!capture.is_return || instruction.operand < 1 || instruction.operand > agent::kMaxSavedWords)
          return make_error(fmt::format("argument {}: needs the state of a function's entry", program.name));
        capture.ops.push_back(op(agent::kOpLoadSaved, 0, static_cast<uint8_t>(instruction.operand - 1)));
        break;
      }
      case FetchOp::LoadReturnAddress:
        if (!capture.is_return) return make_error(fmt::format("argument {}: needs a return address", program.name));
        capture.ops.push_back(op(agent::kOpReturnAddress));
        break;
      case FetchOp::Deref:
        capture.ops.push_back(op(agent::kOpAdd, instruction.operand));
        capture.ops.push_back(op(agent::kOpDeref));
        record_bytes += chunk_bytes(8);
        break;
      case FetchOp::AddOffset: capture.ops.push_back(op(agent::kOpAdd, instruction.operand)); break;
      case FetchOp::StoreRaw:
      case FetchOp::StoreComm:
      case FetchOp::StoreImmediateString:
        break;
      case FetchOp::StoreMemory: {
        const uint64_t size = uint64_t{program.type.size} * std::max<uint64_t>(1, program.type.array_count);
        if (size > agent::kMaxCopy) return make_error(fmt::format("argument {}: more than {} bytes", program.name, agent::kMaxCopy));
        capture.ops.push_back(op(agent::kOpCopy, 0, 0, static_cast<uint32_t>(size)));
        record_bytes += chunk_bytes(static_cast<uint32_t>(size));
        break;
      }
      case FetchOp::StoreString:
        if (program.type.array_count == 0) {
          capture.ops.push_back(op(agent::kOpString));
          record_bytes += chunk_bytes(agent::kMaxCopy);
        } else {
          if (program.type.array_count > kMaxStringArray)
            return make_error(fmt::format("argument {}: more than {} strings", program.name, kMaxStringArray));
          capture.ops.push_back(op(agent::kOpStringArray, 0, 0, program.type.array_count));
          record_bytes += chunk_bytes(8 * program.type.array_count) + program.type.array_count * chunk_bytes(agent::kMaxCopy);
        }
        break;
    }
  }
  if (save) capture.ops.push_back(op(agent::kOpSave, 0, *save));
  capture.ops.push_back(op(agent::kOpNextArgument));
  return {};
}

// Memory as the agent recorded it: a read is served by the chunk that holds most of it.
class RecordedMemory final : public MemoryReader {
 public:
  explicit RecordedMemory(const std::vector<AgentRecord::Chunk>& chunks) : chunks_(chunks) {}
  bool read(uint64_t address, std::span<uint8_t> out) override { return read_up_to(address, out) == out.size(); }
  size_t read_up_to(uint64_t address, std::span<uint8_t> out) override {
    const AgentRecord::Chunk* best = nullptr;
    size_t best_size = 0;
    for (const AgentRecord::Chunk& chunk : chunks_) {
      if (address < chunk.address || address - chunk.address >= chunk.bytes.size()) continue;
      const size_t available = chunk.bytes.size() - static_cast<size_t>(address - chunk.address);
      if (available > best_size) {
        best = &chunk;
        best_size = available;
      }
    }
    if (!best) return 0;
    const size_t n = std::min(out.size(), best_size);
    std::memcpy(out.data(), best->bytes.data() + (address - best->address), n);
    return n;
  }

 private:
  const std::vector<AgentRecord::Chunk>& chunks_;
};

class RecordedRegisters final : public RegisterView {
 public:
  explicit RecordedRegisters(const AgentRecord& record) : record_(record) {}
  uint64_t read(RegisterId id) const override {
    return id < agent::kSavedRegisterWords ? record_.registers[id] : 0;
  }

 private:
  const AgentRecord& record_;
};

uint64_t word_at(std::span<const uint8_t> bytes, size_t offset) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, 8);
  return value;
}

}  // namespace

Result<AgentCapture> compile_agent_capture(const ProbeFetchPlan& plan, bool is_return) {
  AgentCapture capture;
  capture.is_return = is_return;
  uint64_t record_bytes = 8 * agent::kRecordFixedWords;
  if (is_return) {
    // The entry's programs: their reads are not recorded, only the words they yield.
    AgentCapture entry;
    uint64_t unused = 0;
    for (const auto& [number, program] : plan.entry_captures) {
      if (number < 1 || number > agent::kMaxSavedWords)
        return make_error(fmt::format("saves $arg{} at entry: a frame holds {} words", number, agent::kMaxSavedWords));
      if (auto ok = compile_program(program, entry, unused, static_cast<uint8_t>(number - 1)); !ok) return ok.error();
      capture.saved_count = std::max(capture.saved_count, number);
    }
    capture.entry_ops = std::move(entry.ops);
    capture.entry_ops.push_back(op(agent::kOpEnd));
    record_bytes += 8 + 8u * capture.saved_count;
  }
  for (const FetchProgram& program : plan.arguments)
    if (auto ok = compile_program(program, capture, record_bytes); !ok) return ok.error();
  capture.ops.push_back(op(agent::kOpEnd));
  record_bytes += 8u * static_cast<unsigned>(std::popcount(capture.register_mask));
  if (record_bytes > (uint64_t{1} << 20)) return make_error("the arguments need more than 1 MiB per hit");
  capture.max_record = static_cast<uint32_t>((record_bytes + 15) & ~uint64_t{15});  // the agent's unit
  return capture;
}

Result<uint32_t> add_entry_clock(AgentCapture& capture) {
  if (!capture.is_return) return make_error("only a return probe has a duration");
  if (capture.saved_count >= agent::kMaxSavedWords)
    return make_error(fmt::format("its entry saves {} words already: no room for the clock", capture.saved_count));
  const uint32_t slot = capture.saved_count;
  if (!capture.entry_ops.empty() && capture.entry_ops.back().code == agent::kOpEnd) capture.entry_ops.pop_back();
  capture.entry_ops.push_back(op(agent::kOpClock));
  capture.entry_ops.push_back(op(agent::kOpSave, 0, static_cast<uint8_t>(slot)));
  capture.entry_ops.push_back(op(agent::kOpNextArgument));
  capture.entry_ops.push_back(op(agent::kOpEnd));
  capture.saved_count = slot + 1;
  capture.max_record = (capture.max_record + 8 + 15) & ~uint32_t{15};  // the record carries the word
  return slot;
}

namespace {

std::vector<uint8_t> descriptor_bytes(const agent::AgentProbe& head, const std::vector<AgentOp>& ops) {
  const size_t fixed = offsetof(agent::AgentProbe, ops);
  std::vector<uint8_t> bytes(fixed + ops.size() * sizeof(AgentOp));
  std::memcpy(bytes.data(), &head, fixed);
  std::memcpy(bytes.data() + fixed, ops.data(), ops.size() * sizeof(AgentOp));
  return bytes;
}

}  // namespace

std::vector<uint8_t> agent_probe_descriptor(uint64_t ring, uint32_t probe_index, const AgentCapture& capture,
                                            uint64_t returns, uint32_t max_active, std::span<const uint8_t> filter,
                                            std::span<const uint8_t> aggregations) {
  agent::AgentProbe head{};
  head.ring = ring;
  head.returns = returns;
  head.kind = capture.is_return ? agent::kKindReturnEntry : agent::kKindEvent;
  head.probe_index = probe_index;
  head.register_mask = capture.register_mask;
  head.max_record = capture.max_record;
  head.max_active = max_active;
  head.saved_count = capture.saved_count;
  std::vector<AgentOp> ops = capture.is_return ? capture.entry_ops : std::vector<AgentOp>{};
  head.entry_ops = static_cast<uint32_t>(ops.size());
  ops.insert(ops.end(), capture.ops.begin(), capture.ops.end());
  head.op_count = static_cast<uint32_t>(ops.size());
  // The filter, then the aggregations, each 8-byte aligned after the ops.
  size_t end = offsetof(agent::AgentProbe, ops) + ops.size() * sizeof(AgentOp);
  auto place = [&](std::span<const uint8_t> part, uint32_t& offset, uint32_t& bytes) {
    if (part.empty()) return size_t{0};
    const size_t at = (end + 7) & ~size_t{7};
    offset = static_cast<uint32_t>(at);
    bytes = static_cast<uint32_t>(part.size());
    end = at + part.size();
    return at;
  };
  const size_t filter_at = place(filter, head.filter_offset, head.filter_bytes);
  const size_t aggregations_at = place(aggregations, head.aggregation_offset, head.aggregation_bytes);
  std::vector<uint8_t> bytes = descriptor_bytes(head, ops);
  bytes.resize(end, 0);
  if (!filter.empty()) std::memcpy(bytes.data() + filter_at, filter.data(), filter.size());
  if (!aggregations.empty()) std::memcpy(bytes.data() + aggregations_at, aggregations.data(), aggregations.size());
  return bytes;
}

std::vector<uint8_t> agent_return_site_descriptor(uint64_t ring, uint64_t returns) {
  agent::AgentProbe head{};
  head.ring = ring;
  head.returns = returns;
  head.kind = agent::kKindReturnSite;
  head.op_count = 1;
  return descriptor_bytes(head, {op(agent::kOpEnd)});
}

Result<AgentRecord> parse_agent_record(std::span<const uint8_t> record, const AgentCapture& capture) {
  auto corrupt = [](const char* what) { return make_error(fmt::format("corrupt record: {}", what)); };
  if (record.size() < 8 * agent::kRecordFixedWords || record.size() % 8 != 0) return corrupt("bad length");
  if (record.size() > capture.max_record) return corrupt("longer than its probe's records can be");
  AgentRecord out;
  out.tid = word_at(record, 16);
  out.tsc = word_at(record, 24);
  out.cpu = static_cast<uint32_t>(word_at(record, 32) & 0xfff);
  out.register_mask = capture.register_mask;
  size_t at = 8 * agent::kRecordFixedWords;
  out.is_return = capture.is_return;
  if (capture.is_return) {
    if (at + 8 * (1 + size_t{capture.saved_count}) > record.size()) return corrupt("return facts cut short");
    out.return_address = word_at(record, at);
    at += 8;
    for (uint32_t i = 0; i < capture.saved_count; ++i, at += 8) out.saved.push_back(word_at(record, at));
  }
  for (uint32_t r = 0; r < agent::kSavedRegisterWords; ++r) {
    if ((capture.register_mask & (uint64_t{1} << r)) == 0) continue;
    if (at + 8 > record.size()) return corrupt("registers cut short");
    out.registers[r] = word_at(record, at);
    at += 8;
  }
  while (record.size() - at >= agent::kChunkHeaderBytes) {
    uint32_t requested = 0, copied = 0;
    const uint64_t address = word_at(record, at);
    std::memcpy(&requested, record.data() + at + 8, 4);
    std::memcpy(&copied, record.data() + at + 12, 4);
    at += agent::kChunkHeaderBytes;
    if (copied > requested || requested > agent::kMaxCopy) return corrupt("chunk sizes");
    const size_t padded = (size_t{copied} + 7u) & ~size_t{7};
    if (padded > record.size() - at) return corrupt("chunk runs past the record");
    out.chunks.push_back({address, record.subspan(at, copied)});
    at += padded;
  }
  return out;
}

std::vector<FetchedValue> replay_agent_record(const ProbeFetchPlan& plan, const AgentRecord& record,
                                              std::string_view comm) {
  RecordedRegisters registers(record);
  RecordedMemory memory(record.chunks);
  std::optional<uint64_t> return_address;
  if (record.is_return) return_address = record.return_address;
  const FetchEnvironment environment{registers, memory, comm, return_address, record.saved};
  return run_all(plan, environment);
}

}  // namespace xprobe::probe
