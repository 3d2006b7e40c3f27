#include "x86_diff/case_generator.h"

#include <Zydis/Zydis.h>

#include <algorithm>

#include "x86_diff/raw_shape.h"

namespace xprobe::test::x86 {

using insn::x86::Mode;
using insn::x86::Vendor;

namespace {
// Mutations and their weights (out of the sum): real instructions and their mutations
// dominate because random bytes mostly hit the few one-byte opcodes again and again.
constexpr unsigned kWeights[static_cast<size_t>(Mutation::kCount)] = {
    10,  // RandomBytes
    8,   // RealInstruction
    14,  // FlipBits
    10,  // ReplaceByte
    16,  // InsertPrefixes
    12,  // VectorPayload
    12,  // SyntheticVector
    12,  // OpcodeSpace
    6,   // Truncate
};
constexpr size_t kTailTo = 20;  // bytes after the case's core are random, up to this size
}  // namespace

const char* mutation_name(Mutation mutation) {
  switch (mutation) {
    case Mutation::RandomBytes: return "random";
    case Mutation::RealInstruction: return "real";
    case Mutation::FlipBits: return "flip-bits";
    case Mutation::ReplaceByte: return "replace-byte";
    case Mutation::InsertPrefixes: return "insert-prefixes";
    case Mutation::VectorPayload: return "vector-payload";
    case Mutation::SyntheticVector: return "synthetic-vector";
    case Mutation::OpcodeSpace: return "opcode-space";
    case Mutation::Truncate: return "truncate";
    case Mutation::kCount: break;
  }
  return "?";
}

InstructionPool cut_instructions(const CodeSection& section, Mode mode) {
  InstructionPool pool;
  pool.bytes = section.bytes;
  ZydisDecoder decoder;
  const bool long64 = mode == Mode::Long64;
  ZydisDecoderInit(&decoder, long64 ? ZYDIS_MACHINE_MODE_LONG_64 : ZYDIS_MACHINE_MODE_LEGACY_32,
                   long64 ? ZYDIS_STACK_WIDTH_64 : ZYDIS_STACK_WIDTH_32);
  size_t offset = 0;
  while (offset < pool.bytes.size()) {
    ZydisDecodedInstruction insn;
    if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&decoder, nullptr, pool.bytes.data() + offset,
                                                  pool.bytes.size() - offset, &insn))) {
      ++offset;
      continue;
    }
    if (insn.encoding == ZYDIS_INSTRUCTION_ENCODING_VEX || insn.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX ||
        insn.encoding == ZYDIS_INSTRUCTION_ENCODING_XOP)
      pool.vector_encoded.push_back(static_cast<uint32_t>(pool.instructions.size()));
    pool.instructions.push_back({static_cast<uint32_t>(offset), insn.length});
    offset += insn.length;
  }
  return pool;
}

CaseGenerator::CaseGenerator(const InstructionPool& pool, Mode mode, uint64_t seed)
    : pool_(pool), mode_(mode), rng_(seed) {}

void CaseGenerator::push(TestCase& test_case, uint8_t byte) {
  if (test_case.size < TestCase::kCapacity) test_case.buffer[test_case.size++] = byte;
}

void CaseGenerator::push_real(TestCase& test_case, bool vector_only) {
  if (pool_.instructions.empty()) {
    for (int i = 0; i < 4; ++i) push(test_case, random_byte());
    return;
  }
  if (vector_only && pool_.vector_encoded.empty()) {
    // i386 libc has no VEX/EVEX code: start from a synthetic one with a ModRM and SIB.
    build_synthetic_vector(test_case);
    push(test_case, random_byte());
    push(test_case, random_byte());
    return;
  }
  size_t index = below(pool_.instructions.size());
  if (vector_only) index = pool_.vector_encoded[below(pool_.vector_encoded.size())];
  for (uint8_t b : pool_.instruction(index)) push(test_case, b);
}

void CaseGenerator::fill_tail(TestCase& test_case) {
  while (test_case.size < kTailTo) push(test_case, random_byte());
}

uint8_t CaseGenerator::random_prefix() {
  static constexpr uint8_t kLegacy[] = {0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65};
  if (mode_ == Mode::Long64 && chance(25)) return static_cast<uint8_t>(0x40 | below(16));
  return kLegacy[below(sizeof kLegacy)];
}

size_t CaseGenerator::prefix_end(const TestCase& test_case, bool include_rex) const {
  size_t i = 0;
  while (i < test_case.size && is_legacy_prefix(test_case.buffer[i])) ++i;
  if (include_rex && mode_ == Mode::Long64)
    while (i < test_case.size && (test_case.buffer[i] & 0xf0) == 0x40) ++i;
  return i;
}

void CaseGenerator::build_synthetic_vector(TestCase& test_case) {
  const bool long64 = mode_ == Mode::Long64;
  // Outside 64-bit mode the inverted R/X bits must be 1 or the bytes are LES/LDS/BOUND.
  auto payload_top = [&](uint8_t byte) { return long64 || chance(20) ? byte : static_cast<uint8_t>(byte | 0xc0); };
  if (chance(15)) push(test_case, random_prefix());
  switch (below(4)) {
    case 0:
      push(test_case, 0xc5);
      push(test_case, payload_top(random_byte()));
      break;
    case 1: {
      push(test_case, 0xc4);
      uint8_t p0 = payload_top(random_byte());
      if (chance(85)) p0 = static_cast<uint8_t>((p0 & 0xe0) | (1 + below(3)));
      push(test_case, p0);
      push(test_case, random_byte());
      break;
    }
    case 2: {
      push(test_case, 0x62);
      static constexpr uint8_t kMaps[] = {1, 2, 3, 5, 6};
      uint8_t p0 = payload_top(random_byte());
      if (chance(85)) p0 = static_cast<uint8_t>((p0 & 0xf8) | kMaps[below(sizeof kMaps)]);
      if (chance(85)) p0 = static_cast<uint8_t>(p0 & ~0x08);  // reserved bit
      uint8_t p1 = random_byte();
      if (chance(85)) p1 = static_cast<uint8_t>(p1 | 0x04);   // fixed 1 bit
      push(test_case, p0);
      push(test_case, p1);
      push(test_case, random_byte());
      break;
    }
    default: {
      push(test_case, 0x8f);
      uint8_t p0 = random_byte();
      if (chance(85)) p0 = static_cast<uint8_t>((p0 & 0xe0) | (8 + below(3)));
      push(test_case, p0);
      push(test_case, random_byte());
      break;
    }
  }
  push(test_case, random_byte());  // opcode
}

void CaseGenerator::build_opcode_space(TestCase& test_case) {
  static constexpr uint8_t kMandatory[] = {0x66, 0xf2, 0xf3};
  if (chance(40)) push(test_case, kMandatory[below(3)]);
  if (chance(10)) push(test_case, random_prefix());
  if (mode_ == Mode::Long64 && chance(30)) push(test_case, static_cast<uint8_t>(0x40 | below(16)));
  switch (below(5)) {
    case 0: break;
    case 1: push(test_case, 0x0f); break;
    case 2: push(test_case, 0x0f); push(test_case, 0x38); break;
    case 3: push(test_case, 0x0f); push(test_case, 0x3a); break;
    default: push(test_case, 0x0f); push(test_case, 0x0f); break;
  }
  push(test_case, random_byte());
}

void CaseGenerator::build(TestCase& test_case, Mutation mutation) {
  switch (mutation) {
    case Mutation::RandomBytes:
      for (size_t n = 1 + below(15); n > 0; --n) push(test_case, random_byte());
      break;
    case Mutation::RealInstruction:
      push_real(test_case, false);
      break;
    case Mutation::FlipBits: {
      push_real(test_case, false);
      for (size_t n = 1 + below(3); n > 0; --n)
        test_case.buffer[below(test_case.size)] ^= static_cast<uint8_t>(1u << below(8));
      break;
    }
    case Mutation::ReplaceByte:
      push_real(test_case, false);
      test_case.buffer[below(test_case.size)] = random_byte();
      break;
    case Mutation::InsertPrefixes: {
      push_real(test_case, chance(25));
      // At the start, between the legacy prefixes and a REX (the REX stays in force), or
      // after the REX (which the processor then ignores); possibly the same prefix again.
      const size_t positions[3] = {0, prefix_end(test_case, false), prefix_end(test_case, true)};
      const size_t at = positions[below(3)];
      const size_t count = 1 + below(chance(10) ? 14 : 4);
      const uint8_t repeated = random_prefix();
      const bool repeat = chance(30);
      std::array<uint8_t, TestCase::kCapacity> rest{};
      const size_t rest_size = test_case.size - at;
      std::copy_n(test_case.buffer.begin() + static_cast<std::ptrdiff_t>(at), rest_size, rest.begin());
      test_case.size = static_cast<uint8_t>(at);
      for (size_t n = 0; n < count; ++n) push(test_case, repeat ? repeated : random_prefix());
      for (size_t n = 0; n < rest_size; ++n) push(test_case, rest[n]);
      break;
    }
    case Mutation::VectorPayload: {
      push_real(test_case, true);
      const size_t at = prefix_end(test_case, true);
      if (at >= test_case.size) break;
      size_t payload = 0;
      switch (test_case.buffer[at]) {
        case 0xc5: payload = 1; break;
        case 0xc4: case 0x8f: payload = 2; break;
        case 0x62: payload = 3; break;
        default: break;
      }
      // Payload bits, sometimes the opcode byte or the ModRM byte after it too.
      const size_t span = std::min<size_t>(payload + (chance(30) ? 2 : 0), test_case.size - at - 1);
      if (span == 0) break;
      for (size_t n = 1 + below(2); n > 0; --n)
        test_case.buffer[at + 1 + below(span)] ^= static_cast<uint8_t>(1u << below(8));
      break;
    }
    case Mutation::SyntheticVector:
      build_synthetic_vector(test_case);
      break;
    case Mutation::OpcodeSpace:
      build_opcode_space(test_case);
      break;
    case Mutation::Truncate:
    case Mutation::kCount:
      break;
  }
}

TestCase CaseGenerator::next() {
  TestCase test_case;
  unsigned total = 0;
  for (unsigned w : kWeights) total += w;
  unsigned pick = static_cast<unsigned>(below(total));
  size_t kind = 0;
  while (pick >= kWeights[kind]) pick -= kWeights[kind++];
  test_case.mutation = static_cast<Mutation>(kind);
  test_case.vendor = chance(50) ? Vendor::Intel : Vendor::Amd;
  if (test_case.mutation == Mutation::Truncate) {
    // Any other kind of case, cut somewhere inside its core bytes: no random tail.
    build(test_case, static_cast<Mutation>(below(static_cast<size_t>(Mutation::Truncate))));
    if (test_case.size > 1) test_case.size = static_cast<uint8_t>(1 + below(test_case.size - 1));
    return test_case;
  }
  build(test_case, test_case.mutation);
  fill_tail(test_case);
  return test_case;
}

}  // namespace xprobe::test::x86
