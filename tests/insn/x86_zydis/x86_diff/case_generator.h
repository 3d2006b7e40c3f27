#pragma once
// Deterministic stream of byte strings for the differential comparison: random bytes,
// real instructions cut from a library's .text, and mutations of those (bit flips,
// inserted/repeated/misplaced prefixes, VEX/EVEX/XOP payload changes, truncation).
#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "x86_diff/code_section.h"
#include "insn/x86/x86_insn.h"

namespace xprobe::test::x86 {

// Real instructions, cut from a code section by a linear sweep with Zydis.
struct InstructionPool {
  std::vector<uint8_t> bytes;
  struct Entry {
    uint32_t offset;
    uint8_t length;
  };
  std::vector<Entry> instructions;
  std::vector<uint32_t> vector_encoded;  // indexes of VEX/EVEX/XOP instructions

  std::span<const uint8_t> instruction(size_t index) const {
    return {bytes.data() + instructions[index].offset, instructions[index].length};
  }
};

InstructionPool cut_instructions(const CodeSection& section, insn::x86::Mode mode);

enum class Mutation : uint8_t {
  RandomBytes,
  RealInstruction,
  FlipBits,
  ReplaceByte,
  InsertPrefixes,
  VectorPayload,
  SyntheticVector,
  OpcodeSpace,
  Truncate,
  kCount,
};
const char* mutation_name(Mutation mutation);

struct TestCase {
  static constexpr size_t kCapacity = 32;
  std::array<uint8_t, kCapacity> buffer{};
  uint8_t size = 0;
  Mutation mutation = Mutation::RandomBytes;
  insn::x86::Vendor vendor = insn::x86::Vendor::Intel;

  std::span<const uint8_t> bytes() const { return {buffer.data(), size}; }
};

class CaseGenerator {
 public:
  CaseGenerator(const InstructionPool& pool, insn::x86::Mode mode, uint64_t seed);
  TestCase next();

 private:
  uint64_t below(uint64_t bound) { return rng_() % bound; }
  uint8_t random_byte() { return static_cast<uint8_t>(rng_()); }
  bool chance(unsigned percent) { return below(100) < percent; }
  void push(TestCase& test_case, uint8_t byte);
  void push_real(TestCase& test_case, bool vector_only);
  void fill_tail(TestCase& test_case);
  uint8_t random_prefix();
  size_t prefix_end(const TestCase& test_case, bool include_rex) const;
  void build(TestCase& test_case, Mutation mutation);
  void build_synthetic_vector(TestCase& test_case);
  void build_opcode_space(TestCase& test_case);

  const InstructionPool& pool_;
  insn::x86::Mode mode_;
  std::mt19937_64 rng_;
};

}  // namespace xprobe::test::x86
