// Where objdump's listing is not what the processor executes, the comparison follows the
// processor. Every such class is counted by name in SweepStats::objdump_quirks:
//   "redundant REX"          a REX before a legacy prefix, printed as its own line (SDM vol. 2 2.2.1)
//   "fwait folded"           9B printed together with the next x87 instruction (SDM vol. 2 FSTCW note)
//   "cut by a label", ".byte" objdump restarts at every label, even inside an instruction
//   "LOCK where the SDM says #UD", "reserved segment register or MOV to CS",
//   "VEX/EVEX after REX, 66, F2, F3 or LOCK"
//                            objdump prints data bytes in .text as instructions the processor
//                            refuses (SDM vol. 2 LOCK, MOV, 2.3.2); we must say Invalid
//   "MPX form printed as (bad)" 0F 1A/1B forms MPX rejects but that execute as hint NOPs
// Everything else must agree: same start, same length, or (bad) for both.
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

bool is_legacy_prefix(uint8_t b) {
  return b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67 ||
         b == 0xf0 || b == 0xf2 || b == 0xf3;
}

// A line of prefixes only, ending in a REX ("rex.W", "gs rex.X", "repnz repnz rex.X"): objdump
// stops there when a legacy prefix follows the REX.
bool is_prefixes_ending_in_rex(const ObjdumpSection& section, const ObjdumpInsn& insn) {
  if (insn.bad) return false;
  const uint8_t* bytes = section.bytes.data() + insn.offset;
  for (unsigned k = 0; k < insn.length; ++k)
    if (!is_legacy_prefix(bytes[k]) && (bytes[k] & 0xf0) != 0x40) return false;
  return (bytes[insn.length - 1] & 0xf0) == 0x40;
}

// objdump prints FWAIT (9B) together with the x87 instruction after it: "fstcw" for
// 9B D9 /7, and likewise fstsw/finit/fclex/fstenv/fsave, but also e.g. "fstp" for 9B DD D8,
// and after prefixes. Returns the length up to and including the 9B, or 0.
unsigned folded_fwait_length(const ObjdumpSection& section, const ObjdumpInsn& insn) {
  if (insn.bad || insn.mnemonic == "fwait") return 0;
  const uint8_t* bytes = section.bytes.data() + insn.offset;
  for (unsigned k = 0; k + 1 < insn.length; ++k) {
    if (bytes[k] == 0x9b) return k + 1;
    if (!is_legacy_prefix(bytes[k]) && (bytes[k] & 0xf0) != 0x40) return 0;
  }
  return 0;
}

// objdump's listing turned into what the processor decodes. Classes:
//  * "redundant REX": objdump prints a REX prefix that is followed by a legacy prefix (or by
//    another REX) as an instruction of its own ("rex.W", with the prefixes before it: "gs rex.X"). The processor ignores such a REX
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
  const auto at_label = [&](uint64_t address) {
    return std::binary_search(section.symbols.begin(), section.symbols.end(), address);
  };
  for (size_t k = 0; k < insns.size(); ++k) {
    const ObjdumpInsn& insn = insns[k];
    if (is64 && is_prefixes_ending_in_rex(section, insn)) {
      size_t last = k;
      while (last + 1 < insns.size() && is_prefixes_ending_in_rex(section, insns[last]) &&
             !at_label(insns[last + 1].address))
        ++last;
      if (last != k && !is_prefixes_ending_in_rex(section, insns[last])) {
        const ObjdumpInsn& tail = insns[last];
        const unsigned head = static_cast<unsigned>(tail.offset - insn.offset);
        stats.objdump_quirks["redundant REX"] += last - k;
        if (const unsigned wait = folded_fwait_length(section, tail)) {  // "rex.W" then "9b dd c3"
          stats.objdump_quirks["fwait folded"] += 1;
          out.push_back({insn.address, insn.offset, head + wait, false, &tail});
          out.push_back({tail.address + wait, tail.offset + wait, tail.length - wait, false, &tail});
        } else {
          out.push_back({insn.address, insn.offset, head + tail.length, tail.bad, &tail});
        }
        k = last;
        continue;
      }
    }
    if (const unsigned wait = folded_fwait_length(section, insn)) {
      stats.objdump_quirks["fwait folded"] += 1;
      out.push_back({insn.address, insn.offset, wait, false, &insn});
      out.push_back({insn.address + wait, insn.offset + wait, insn.length - wait, false, &insn});
      continue;
    }
    out.push_back({insn.address, insn.offset, insn.length, insn.bad, &insn});
  }
  return out;
}

// Classes where objdump prints an instruction that the processor refuses with #UD (found in
// data that sits in .text, e.g. libcrypto's AES tables). We must say Invalid there.
const char* processor_refuses(const ObjdumpSection& section, const Expected& e,
                              const insn::x86::DecoderConfig& config) {
  const uint8_t* bytes = section.bytes.data() + e.offset;
  size_t k = 0;
  bool lock = false;
  const bool is64 = config.mode == insn::x86::Mode::Long64;
  for (; k < e.length; ++k) {
    const uint8_t b = bytes[k];
    if (b == 0xf0) lock = true;
    const bool legacy = b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 || b == 0x66 ||
                        b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3;
    if (!legacy && !(is64 && (b & 0xf0) == 0x40)) break;
  }
  // SDM vol. 2 LOCK: "#UD if the LOCK prefix is used with an instruction not listed" or when
  // the destination is not a memory operand. Check: without the LOCK the same bytes decode
  // to objdump's length.
  if (lock) {
    std::vector<uint8_t> unlocked(bytes, bytes + e.length);
    for (size_t j = 0; j < k; ++j)
      if (unlocked[j] == 0xf0) unlocked[j] = 0x3e;  // a DS override changes no length
    X86Insn insn;
    if (insn::x86::decode(unlocked, e.address, config, insn) == DecodeStatus::Ok && insn.length == e.length)
      return "LOCK where the SDM says #UD";
  }
  // SDM vol. 2 2.3.2 / 2.7: VEX and EVEX after a REX, 66, F2, F3 or LOCK prefix are #UD.
  if (k < e.length && k > 0 && (bytes[k] == 0xc4 || bytes[k] == 0xc5 || bytes[k] == 0x62) &&
      (is64 || (k + 1 < e.length && (bytes[k + 1] & 0xc0) == 0xc0))) {
    for (size_t j = 0; j < k; ++j)
      if (bytes[j] == 0x66 || bytes[j] == 0xf2 || bytes[j] == 0xf3 || bytes[j] == 0xf0 || (is64 && (bytes[j] & 0xf0) == 0x40))
        return "VEX/EVEX after REX, 66, F2, F3 or LOCK";
  }
  // SDM vol. 2 MOV: Sreg 6 and 7 are reserved and loading CS with MOV is #UD.
  if (k + 1 < e.length && (bytes[k] == 0x8c || bytes[k] == 0x8e)) {
    const unsigned reg = (bytes[k + 1] >> 3) & 7;
    if (reg >= 6 || (bytes[k] == 0x8e && reg == 1)) return "reserved segment register or MOV to CS";
  }
  return nullptr;
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
    if (cursor != e.address) {
      problem = "our sweep does not start an instruction here";
    } else if (e.source->mnemonic == ".byte") {
      // objdump does not decode across a label: an instruction that would run into the next
      // symbol (or past the section) is printed as .byte. With the bytes cut at that label,
      // we must find the instruction truncated as well.
      const auto next = std::upper_bound(section.symbols.begin(), section.symbols.end(), e.address);
      const uint64_t limit = next == section.symbols.end() ? section.start + section.bytes.size() : *next;
      const size_t room = static_cast<size_t>(std::min<uint64_t>(limit - e.address, bytes.size() - e.offset));
      X86Insn cut;
      if (insn::x86::decode(bytes.subspan(e.offset, room), e.address, config, cut) == DecodeStatus::Ok)
        problem = "objdump stops at a label, we decode an instruction before it";
      else
        stats.objdump_quirks["cut by a label (.byte)"] += 1;
    } else if (!e.bad && status == DecodeStatus::Invalid) {
      if (const char* why = processor_refuses(section, e, config))
        stats.objdump_quirks[why] += 1;
      else
        problem = "we cannot decode it";
    } else if (e.bad && status == DecodeStatus::Ok && our_length == e.length &&
               e.source->mnemonic.rfind("bnd", 0) == 0) {
      // MPX BNDLDX/BNDSTX operand forms MPX rejects: without MPX (all current processors)
      // 0F 1A/1B are hint NOPs (SDM vol. 2 NOP, "0F 1A/1B reserved NOP"), same length.
      stats.objdump_quirks["MPX form printed as (bad)"] += 1;
    } else if (e.bad) {
      problem = status == DecodeStatus::Ok ? "objdump says (bad), we decode it" : nullptr;
    }
    else if (status != DecodeStatus::Ok)
      problem = "we cannot decode it";
    else if (our_length > e.length && std::binary_search(section.symbols.begin(), section.symbols.end(),
                                                         e.address + e.length))
      stats.objdump_quirks["cut by a label"] += 1;  // objdump restarts at the label inside our instruction
    else if (our_length != e.length)
      problem = "lengths differ";
    if (e.bad && status != DecodeStatus::Ok) ++stats.both_bad;
    if (problem != nullptr) {
      ++stats.mismatches;
      if (stats.examples.size() < 40) stats.examples.push_back(describe(section, e, problem, status, our_length));
    }
    // Follow objdump after a disagreement (and through (bad) bytes), so one difference is
    // counted once instead of desynchronising the rest of the sweep.
    // When the instruction agreed, e.length is also our length: this is our linear sweep.
    cursor = e.address + e.length;
  }
  return stats;
}

}  // namespace xprobe::test
