#pragma once
// One differential comparison between xprobe's decoder and Zydis: does it agree on
// validity and length, and if not, which class of disagreement is it and is that class
// a known one where the manuals show xprobe is right.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "insn/x86/decoder.h"
#include "x86_diff/raw_shape.h"
#include "x86_diff/zydis_oracle.h"

namespace xprobe::test::x86 {

struct Comparison {
  std::span<const uint8_t> bytes;
  insn::x86::DecoderConfig config;
  insn::x86::DecodeStatus ours = insn::x86::DecodeStatus::Invalid;
  insn::x86::X86Insn insn;
  OracleResult zydis;
  RawShape shape;

  // Validity and length agree, and for a valid instruction so does its layout: ModRM,
  // SIB, displacement and immediate offsets and sizes, the control-flow kind and the
  // relative branch target.
  bool agrees() const;
  // Empty, or which layout field differs ("disp", "imm", "flow", "rel-target", ...); both valid.
  std::string field_mismatch() const;
  // "64 ours=ok(4) zydis=DECODING_ERROR legacy 0f 1e pfx=f3 /7 reg"
  std::string disagreement_class(bool coarse = false) const;
};

Comparison compare_decoders(std::span<const uint8_t> bytes, const insn::x86::DecoderConfig& config,
                            const ZydisOracle& oracle);

// A disagreement class in which xprobe follows the processor and objdump 2.40 and Zydis
// does not (or both are defensible): matched narrowly, with the manual's reference.
struct ExpectedException {
  const char* name;
  const char* reference;  // why xprobe is right: the manual's section
  bool (*matches)(const Comparison&);
  // One case of the class, replayed by the test so that a stale entry (the disagreement
  // went away) is noticed and removed.
  insn::x86::Mode example_mode;
  insn::x86::Vendor example_vendor;
  const char* example_hex;
};
const std::vector<ExpectedException>& expected_exceptions();
const ExpectedException* find_expected_exception(const Comparison& comparison);

// Counts per disagreement class with a reproducer each, for the test's failure message and
// the long run's report.
class DisagreementTally {
 public:
  void add(const Comparison& comparison, const char* mutation);
  void add_expected(const ExpectedException& exception);
  // Classes without the ModRM/VEX.L/W detail, for an overview of long runs.
  void set_coarse(bool coarse) { coarse_ = coarse; }
  uint64_t total() const { return total_; }
  size_t class_count() const { return classes_.size(); }
  // The classes sorted by count, at most `limit` of them, one line each with an example.
  std::string report(size_t limit) const;
  std::string expected_report() const;

 private:
  struct ClassStats {
    uint64_t count = 0;
    std::string example;
  };
  std::map<std::string, ClassStats> classes_;
  std::map<std::string, uint64_t> expected_;
  uint64_t total_ = 0;
  bool coarse_ = false;
};

const char* decode_status_name(insn::x86::DecodeStatus status);
std::string describe_case(const Comparison& comparison);  // bytes, mode, vendor, both verdicts

}  // namespace xprobe::test::x86
