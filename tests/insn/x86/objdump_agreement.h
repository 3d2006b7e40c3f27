#pragma once
// Linear-sweep comparison of xprobe's x86 decoder with objdump's listing.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "insn/x86/decoder.h"
#include "objdump_listing.h"

namespace xprobe::test {

struct SweepStats {
  size_t compared = 0;    // instructions (as the processor sees them) whose start and length were checked
  size_t both_bad = 0;    // objdump says (bad) and so do we
  size_t mismatches = 0;
  // Places where objdump's listing differs from what the processor executes, by class
  // (see objdump_agreement.cpp for each class and its manual reference).
  std::map<std::string, size_t> objdump_quirks;
  std::vector<std::string> examples;  // the first mismatches, for the failure message

  void add(const SweepStats& other);
};

SweepStats compare_with_objdump(const ObjdumpSection& section, const insn::x86::DecoderConfig& config);

}  // namespace xprobe::test
