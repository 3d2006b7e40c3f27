#include "objdump_agreement.h"

#include <algorithm>
#include <cstdio>
#include <span>

namespace xprobe::test {
namespace {

using insn::x86::DecodeStatus;
using insn::x86::X86Insn;

struct Expected {
  uint64_t address;
  uint32_t offset;
  unsigned length;
  bool bad;
  const ObjdumpInsn* source;
};

bool is_rex_only(const ObjdumpSection& section, const ObjdumpInsn& insn) {
  if (insn.mnemonic.rfind("rex", 0) != 0) return false;
  for (unsigned k = 0; k < insn.length; ++k)
    if ((section.bytes[insn.offset + k] & 0xf0) != 0x40) return false;
  return true;
}

// objdump prints FWAIT (9B) together with the x87 instruction after it: "fstcw" for
// 9B D9 /7, and likewise fstsw/finit/fclex/fstenv/fsave, but also e.g. "fstp" for 9B DD D8.
bool is_folded_fwait(const ObjdumpSection& section, const ObjdumpInsn& insn) {
  return insn.length >= 2 && section.bytes[insn.offset] == 0x9b && insn.mnemonic != "fwait" &&
         insn.mnemonic != "(bad)";
}

// objdump's listing turned into what the processor decodes. Classes:
//  * "redundant REX": objdump prints a REX prefix that is followed by a legacy prefix (or by
//    another REX) as an instruction of its own ("rex.W"). The processor ignores such a REX
//    but it still belongs to the instruction that follows (SDM vol. 2 2.2.1: "REX prefixes
//    ... must immediately precede the opcode byte or the escape opcode byte ... Other
//    placements are ignored"; the instruction is one, up to 15 bytes, SDM vol. 2 2.1.1).
//  * "fwait folded": objdump prints 9B D9 /7 as fstcw and likewise fstsw/finit/fclex/fstenv/
//    fsave, and folds 9B into any following x87 instruction. 9B is WAIT/FWAIT, an instruction of its own (SDM vol. 2 FSTCW/FNSTCW note: "the
//    assembler issues two instructions for the FSTCW instruction (an FWAIT instruction
//    followed by an FNSTCW instruction)"); the processor executes, and can trap, each alone.
std::vector<Expected> processor_view(const ObjdumpSection& section, bool is64, SweepStats& stats) {
  std::vector<Expected> out;
  out.reserve(section.insns.size());
  const auto& insns = section.insns;
  for (size_t k = 0; k < insns.size(); ++k) {
    const ObjdumpInsn& insn = insns[k];
    if (is64 && is_rex_only(section, insn)) {
      size_t last = k;
      while (last + 1 < insns.size() && is_rex_only(section, insns[last]) &&
             !std::binary_search(section.symbols.begin(), section.symbols.end(), insns[last + 1].address))
        ++last;
      if (last != k && !is_rex_only(section, insns[last])) {
        const ObjdumpInsn& tail = insns[last];
        const unsigned length = static_cast<unsigned>(tail.offset + tail.length - insn.offset);
        stats.objdump_quirks["redundant REX"] += last - k;
        out.push_back({insn.address, insn.offset, length, tail.mnemonic == "(bad)", &insn});
        k = last;
        continue;
      }
    }
    if (is_folded_fwait(section, insn)) {
      stats.objdump_quirks["fwait folded"] += 1;
      out.push_back({insn.address, insn.offset, 1, false, &insn});
      out.push_back({insn.address + 1, insn.offset + 1, insn.length - 1u, false, &insn});
      continue;
    }
    out.push_back({insn.address, insn.offset, insn.length, insn.mnemonic == "(bad)", &insn});
  }
  return out;
}

std::string describe(const ObjdumpSection& section, const Expected& e, const char* what, DecodeStatus status,
                     unsigned our_length) {
  char head[200];
  std::snprintf(head, sizeof head, "%s %#llx: %s (objdump: %s, %u bytes; xprobe: status %d, %u bytes):",
                section.name.c_str(), static_cast<unsigned long long>(e.address), what, e.source->mnemonic.c_str(),
                e.length, static_cast<int>(status), our_length);
  std::string text = head;
  const size_t end = std::min<size_t>(section.bytes.size(), e.offset + 16);
  for (size_t k = e.offset; k < end; ++k) {
    char byte[4];
    std::snprintf(byte, sizeof byte, " %02x", section.bytes[k]);
    text += byte;
  }
  return text;
}

}  // namespace

void SweepStats::add(const SweepStats& other) {
  compared += other.compared;
  both_bad += other.both_bad;
  mismatches += other.mismatches;
  for (const auto& [name, count] : other.objdump_quirks) objdump_quirks[name] += count;
  for (const auto& e : other.examples)
    if (examples.size() < 40) examples.push_back(e);
}

SweepStats compare_with_objdump(const ObjdumpSection& section, const insn::x86::DecoderConfig& config) {
  SweepStats stats;
  const std::vector<Expected> expected = processor_view(section, config.mode == insn::x86::Mode::Long64, stats);
  const std::span<const uint8_t> bytes(section.bytes);
  auto symbol = section.symbols.begin();
  uint64_t cursor = section.start;
  for (const Expected& e : expected) {
    // objdump restarts its sweep at every label; so do we.
    while (symbol != section.symbols.end() && *symbol < e.address) ++symbol;
    if (symbol != section.symbols.end() && *symbol == e.address) cursor = e.address;
    ++stats.compared;
    X86Insn insn;
    const DecodeStatus status = insn::x86::decode(bytes.subspan(e.offset), e.address, config, insn);
    const unsigned our_length = status == DecodeStatus::Ok ? insn.length : 0;
    const char* problem = nullptr;
    if (cursor != e.address)
      problem = "our sweep does not start an instruction here";
    else if (e.bad)
      problem = status == DecodeStatus::Ok ? "objdump says (bad), we decode it" : nullptr;
    else if (status != DecodeStatus::Ok)
      problem = "we cannot decode it";
    else if (our_length != e.length)
      problem = "lengths differ";
    if (e.bad && status != DecodeStatus::Ok) ++stats.both_bad;
    if (problem != nullptr) {
      ++stats.mismatches;
      if (stats.examples.size() < 40) stats.examples.push_back(describe(section, e, problem, status, our_length));
    }
    // Follow objdump after a disagreement (and through (bad) bytes), so one difference is
    // counted once instead of desynchronising the rest of the sweep.
    cursor = problem == nullptr && !e.bad ? e.address + our_length : e.address + e.length;
  }
  return stats;
}

}  // namespace xprobe::test
