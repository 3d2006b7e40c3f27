// libFuzzer target for everything the tracer reads from the jump engine's ring: the ring
// header, record headers, lengths and chunks, all written by the traced (untrusted) process.
// The input is the ring as the process left it; it is drained and every record parsed and
// replayed through the fetch programs of a probe with every kind of argument (probe 0) or of
// a return probe with saved arguments (probe 1).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "probe/agent/agent_abi.h"
#include "probe/agent_capture.h"
#include "probe/agent_ring_reader.h"
#include "probe/definition_parser.h"
#include "probe/fetch_program.h"

namespace {

using namespace xprobe;

struct Probe {
  probe::ProbeFetchPlan plan;
  probe::AgentCapture capture;
};

Probe compiled(const char* text, bool is_return) {
  auto definition = probe::parse_definition(text);
  Probe out;
  out.plan = probe::compile_fetch_plan(definition.value(), insn::Arch::X86_64);
  out.capture = *probe::compile_agent_capture(out.plan, is_return);
  return out;
}

const Probe& fuzzed_probe(uint32_t index) {
  static const Probe entry = compiled(
      "p:f/e work a=%di:s64 s=+0(%si):string n=+8(+0(%dx)):u32 arr=+0(%sp):x16[4] names=+0(%cx):string[3] "
      "b=+0(%r8):b3@2/8 c=$comm st=$stack1",
      false);
  static const Probe ret = compiled("r:f/r work ret=$retval:s64 a=$arg1:s64 s=+0($arg2):string g=$arg7:x64", true);
  return index == 1 ? ret : entry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint64_t kRingSize = 4096;
  constexpr uint64_t kBase = 0x100000;  // where the fuzzed ring "is" in the process
  std::vector<uint8_t> memory(sizeof(agent::AgentRingHeader) + kRingSize, 0);
  // Records laid out from the input: 2 bytes length, 1 byte kind, then the body. Positions are
  // mostly right (else the reader stops at once and the parser is never reached), and the
  // input may still lie in every field.
  auto* header = reinterpret_cast<agent::AgentRingHeader*>(memory.data());
  uint8_t* ring = memory.data() + sizeof(agent::AgentRingHeader);
  size_t in = 0;
  uint64_t at = 0;
  while (in + 3 <= size && at + 16 <= kRingSize) {
    uint64_t length = (static_cast<uint64_t>(data[in]) | static_cast<uint64_t>(data[in + 1]) << 8) % 1024;
    const uint8_t kind = data[in + 2];
    in += 3;
    if ((kind & 0x80) == 0) length = (length + 15) & ~uint64_t{15};  // mostly well-formed
    if (length < 16) length = 16;
    if (at + length > kRingSize) length = kRingSize - at;
    const uint64_t index = (kind & 3) == 3 ? agent::kPadProbe : (kind & 3);
    const uint64_t word = ((kind & 4) ? agent::kCommitted : 0) | (kind & 8 ? 0 : agent::kCommitted) | index << 32 | length;
    const uint64_t position = (kind & 0x40) ? at + 8 : at;
    std::memcpy(ring + at, &word, 8);
    std::memcpy(ring + at + 8, &position, 8);
    const size_t body = std::min<size_t>(length - 16, size - in);
    std::memcpy(ring + at + 16, data + in, body);
    in += body;
    at += length;
  }
  header->magic = agent::kRingMagic;
  header->ring_size = kRingSize;
  header->head = at;
  header->dropped[0] = size > 0 ? data[0] : 0;
  probe::AgentRingReader::Io io;
  io.read = [&](uint64_t at, std::span<uint8_t> out) {
    if (at < kBase || at - kBase > memory.size() || out.size() > memory.size() - (at - kBase)) return false;
    std::memcpy(out.data(), memory.data() + (at - kBase), out.size());
    return true;
  };
  io.write = [&](uint64_t at, std::span<const uint8_t> bytes) {
    if (at < kBase || at - kBase > memory.size() || bytes.size() > memory.size() - (at - kBase)) return false;
    std::memcpy(memory.data() + (at - kBase), bytes.data(), bytes.size());
    return true;
  };
  probe::AgentRingReader reader(io, kBase, kRingSize);
  uint64_t sink = 0;
  for (int pass = 0; pass < 2; ++pass) {
    reader.drain(
        2,
        [&](uint32_t index, std::span<const uint8_t> record) {
          const Probe& fuzzed = fuzzed_probe(index);
          auto parsed = probe::parse_agent_record(record, fuzzed.capture);
          if (!parsed) return;
          for (const auto& value : probe::replay_agent_record(fuzzed.plan, *parsed, "fuzz")) sink += value.element_count();
        },
        [&](uint32_t, uint64_t count) { sink += count; });
  }
  reader.abandon_unfinished([&](uint32_t, uint64_t count) { sink += count; });
  return sink == 0xdeadbeef ? 1 : 0;
}
