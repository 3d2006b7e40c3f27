// Coverage corpus: gen_coverage_corpus.py writes sample encodings of every opcode_map.txt
// entry (both modes), `as` assembles them, and each one is checked three ways: our decoder's
// length and flow kind against the length and flow worked out by the generator from the
// encoding rules, and objdump's instruction boundary against the same length.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "insn/x86/decoder.h"
#include "objdump_listing.h"

namespace xprobe::test {
namespace {

using insn::x86::DecodeStatus;
using insn::x86::Mode;

struct Sample {
  std::string label;
  unsigned length = 0;
  std::string flow;
  int map_line = 0;
  std::string entry;  // space:opcode:mnemonic
};

std::vector<Sample> read_expectations(const std::string& path) {
  std::vector<Sample> samples;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Sample s;
    if (fields >> s.label >> s.length >> s.flow >> s.map_line >> s.entry) samples.push_back(s);
  }
  return samples;
}

// Entries for which objdump 2.40 decodes none of our sample forms although the processor
// does (each with the manual's word). Everything else must be decoded by objdump in at least
// one form, with the same length.
const std::map<std::string, std::string> kObjdumpDoesNotKnow = {
    {"1b:d6:salc", "SALC: AMD APM vol. 3 lists D6 as reserved in 64-bit mode only; processors execute it as a "
                   "one-byte instruction in 32-bit mode (Zydis decodes it), objdump 2.40 prints (bad)"},
};

struct CorpusCase {
  const char* name;
  Mode mode;
  const char* object;
  const char* expect;
};

class CoverageCorpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(CoverageCorpus, DecoderAndObjdumpAgreeWithTheMap) {
  const CorpusCase& c = GetParam();
  const std::vector<Sample> samples = read_expectations(c.expect);
  ASSERT_GT(samples.size(), 1000u);
  const auto sections = run_objdump(c.object, c.mode == Mode::Long64 ? "-M amd64" : "-M i386");
  ASSERT_EQ(sections.size(), 1u);
  const ObjdumpSection& text = sections.front();
  ASSERT_EQ(text.symbols.size(), samples.size()) << "one label per sample";
  std::map<uint64_t, const ObjdumpInsn*> by_address;
  for (const auto& insn : text.insns) by_address[insn.address] = &insn;

  const insn::x86::DecoderConfig config{c.mode, insn::x86::Vendor::Amd};
  std::map<int, unsigned> accepted_forms;  // map line -> forms objdump decodes
  std::map<int, std::string> entry_of_line;
  size_t objdump_refused = 0, decoder_mismatches = 0, objdump_mismatches = 0;
  std::string failures;
  std::string refused_examples;
  for (size_t k = 0; k < samples.size(); ++k) {
    const Sample& s = samples[k];
    const uint64_t address = text.symbols[k];
    const uint64_t end = k + 1 < samples.size() ? text.symbols[k + 1] : text.start + text.bytes.size();
    const size_t offset = static_cast<size_t>(address - text.start);
    entry_of_line[s.map_line] = s.entry;
    accepted_forms[s.map_line] += 0;
    if (end - address != s.length) {
      failures += s.label + ": the assembler did not emit the sample's bytes\n";
      continue;
    }
    insn::x86::X86Insn insn;
    const DecodeStatus status =
        insn::x86::decode(std::span<const uint8_t>(text.bytes).subspan(offset, s.length), address, config, insn);
    if (status != DecodeStatus::Ok || insn.length != s.length || insn::x86::flow_kind_name(insn.flow) != s.flow) {
      ++decoder_mismatches;
      char line[256];
      std::snprintf(line, sizeof line, "%s (%s, map line %d): decoder status %d length %u flow %s, expected %u %s\n",
                    s.label.c_str(), s.entry.c_str(), s.map_line, static_cast<int>(status), insn.length,
                    insn::x86::flow_kind_name(insn.flow), s.length, s.flow.c_str());
      if (failures.size() < 8000) failures += line;
    }
    const auto found = by_address.find(address);
    if (found == by_address.end()) {
      failures += s.label + ": objdump has no instruction at the label\n";
      continue;
    }
    const ObjdumpInsn& theirs = *found->second;
    if (theirs.bad) {
      // objdump refuses this form (W/L/mask/register constraints the map does not encode,
      // see the report): no boundary to compare.
      ++objdump_refused;
      if (refused_examples.size() < 600) refused_examples += " " + s.entry;
      continue;
    }
    ++accepted_forms[s.map_line];
    if (theirs.length != s.length) {
      ++objdump_mismatches;
      char line[256];
      std::snprintf(line, sizeof line, "%s (%s, map line %d): objdump decodes %u bytes (%s), expected %u\n",
                    s.label.c_str(), s.entry.c_str(), s.map_line, theirs.length, theirs.mnemonic.c_str(), s.length);
      if (failures.size() < 8000) failures += line;
    }
  }
  size_t uncovered = 0;
  for (const auto& [map_line, count] : accepted_forms) {
    if (count != 0) continue;
    const std::string& entry = entry_of_line[map_line];
    if (kObjdumpDoesNotKnow.count(entry) != 0) continue;
    ++uncovered;
    failures += "map line " + std::to_string(map_line) + " (" + entry + "): objdump decodes none of its forms\n";
  }
  std::printf("coverage corpus %s: %zu forms of %zu map lines; decoder mismatches %zu; objdump decoded %zu forms, "
              "%zu length mismatches, refused %zu forms; map lines objdump never decodes: %zu (+%zu listed)\n",
              c.name, samples.size(), accepted_forms.size(), decoder_mismatches, samples.size() - objdump_refused,
              objdump_mismatches, objdump_refused, uncovered, kObjdumpDoesNotKnow.size());
  EXPECT_EQ(decoder_mismatches, 0u) << failures;
  EXPECT_EQ(objdump_mismatches, 0u) << failures;
  EXPECT_EQ(uncovered, 0u) << failures;
}

INSTANTIATE_TEST_SUITE_P(Modes, CoverageCorpus,
                         ::testing::Values(CorpusCase{"64", Mode::Long64, XPROBE_X86_CORPUS64_O, XPROBE_X86_CORPUS64_EXPECT},
                                           CorpusCase{"32", Mode::Protected32, XPROBE_X86_CORPUS32_O,
                                                      XPROBE_X86_CORPUS32_EXPECT}),
                         [](const ::testing::TestParamInfo<CorpusCase>& param_info) {
                           return std::string("mode") + param_info.param.name;
                         });

}  // namespace
}  // namespace xprobe::test
