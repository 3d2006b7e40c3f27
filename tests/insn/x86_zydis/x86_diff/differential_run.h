#pragma once
// The differential run shared by the in-suite test (fixed seed, a few hundred thousand
// cases) and the long run program (millions, seed from the command line).
#include <array>
#include <cstdint>
#include <string>

#include "x86_diff/case_generator.h"
#include "x86_diff/differential.h"

namespace xprobe::test::x86 {

// The libc whose .text seeds the mutations: the 64-bit one, or for 32-bit mode the i386
// one when installed (gcc-12-multilib), else the 64-bit one's bytes.
Result<InstructionPool> load_libc_instructions(insn::x86::Mode mode);

struct RunSummary {
  uint64_t cases = 0;
  uint64_t agreed = 0;
  uint64_t agreed_valid = 0;  // of those, both decoded an instruction (same length and layout)
  uint64_t expected = 0;  // disagreements matched by the expected-exception list
  std::array<uint64_t, static_cast<size_t>(Mutation::kCount)> disagreements_by_mutation{};
  DisagreementTally expected_tally;    // only add_expected() is used
  DisagreementTally unexpected;

  std::string report(size_t class_limit) const;
};

void run_differential(const InstructionPool& pool, insn::x86::Mode mode, uint64_t seed, uint64_t count,
                      RunSummary& summary);

}  // namespace xprobe::test::x86
