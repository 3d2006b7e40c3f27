#include "x86_diff/differential_run.h"

#include <fmt/format.h>

#include <filesystem>

namespace xprobe::test::x86 {

using insn::x86::DecoderConfig;
using insn::x86::Mode;
using insn::x86::Vendor;

Result<InstructionPool> load_libc_instructions(Mode mode) {
  std::string path = "/lib/x86_64-linux-gnu/libc.so.6";
  if (mode == Mode::Protected32) {
    for (const char* candidate : {"/lib32/libc.so.6", "/usr/lib32/libc.so.6", "/lib/i386-linux-gnu/libc.so.6"}) {
      if (std::filesystem::exists(candidate)) {
        path = candidate;
        break;
      }
    }
  }
  auto section = read_code_section(path, ".text");
  if (!section) return section.error();
  return cut_instructions(*section, mode);
}

void run_differential(const InstructionPool& pool, Mode mode, uint64_t seed, uint64_t count, RunSummary& summary) {
  const ZydisOracle intel(DecoderConfig{mode, Vendor::Intel});
  const ZydisOracle amd(DecoderConfig{mode, Vendor::Amd});
  CaseGenerator generator(pool, mode, seed);
  for (uint64_t n = 0; n < count; ++n) {
    const TestCase test_case = generator.next();
    const ZydisOracle& oracle = test_case.vendor == Vendor::Intel ? intel : amd;
    const Comparison comparison = compare_decoders(test_case.bytes(), oracle.config(), oracle);
    ++summary.cases;
    if (comparison.agrees()) {
      ++summary.agreed;
      if (comparison.ours == insn::x86::DecodeStatus::Ok) ++summary.agreed_valid;
      continue;
    }
    ++summary.disagreements_by_mutation[static_cast<size_t>(test_case.mutation)];
    if (const ExpectedException* exception = find_expected_exception(comparison)) {
      ++summary.expected;
      summary.expected_tally.add_expected(*exception);
    } else {
      summary.unexpected.add(comparison, mutation_name(test_case.mutation));
    }
  }
}

std::string RunSummary::report(size_t class_limit) const {
  std::string text = fmt::format(
      "cases {}, agreed {} ({} valid instructions, {} refused by both), expected exceptions {}, "
      "unexpected disagreements {} in {} classes\n",
      cases, agreed, agreed_valid, agreed - agreed_valid, expected, unexpected.total(), unexpected.class_count());
  text += "disagreements by mutation:";
  for (size_t i = 0; i < disagreements_by_mutation.size(); ++i)
    if (disagreements_by_mutation[i] != 0)
      text += fmt::format(" {}={}", mutation_name(static_cast<Mutation>(i)), disagreements_by_mutation[i]);
  text += "\n";
  if (expected != 0) text += "expected exceptions:\n" + expected_tally.expected_report();
  if (unexpected.total() != 0) text += "unexpected disagreement classes:\n" + unexpected.report(class_limit);
  return text;
}

}  // namespace xprobe::test::x86
