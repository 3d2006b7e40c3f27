// May a probe go at this A64 address? Alignment, range, the instruction's class, and the
// load-exclusive/store-exclusive sequences of the function (scanned from its start).
#include "arch/arm64/arm64_check.h"

#include <fmt/format.h>

#include "arch/arm64/arm64_probe_policy.h"
#include "insn/arm64/arm64_insn.h"

namespace xprobe::arch::arm64 {

using insn::arm64::ExclusiveKind;
using insn::arm64::InsnClass;

namespace {

constexpr uint64_t kInsnSize = 4;

}  // namespace

CheckOutcome check_probe_point(std::span<const uint8_t> function_bytes, uint64_t function_start,
                               uint64_t probe_address) {
  CheckOutcome outcome;
  outcome.probe_address = probe_address;
  if (probe_address % kInsnSize != 0) {
    outcome.verdict = Verdict::Misaligned;
    outcome.reason = fmt::format("{:#x} is not a multiple of 4; A64 instructions are 4-byte aligned (-EILSEQ)",
                                 probe_address);
    return outcome;
  }
  if (function_start % kInsnSize != 0) {
    outcome.verdict = Verdict::Misaligned;
    outcome.reason = fmt::format("the function starts at {:#x}, which is not a multiple of 4 (-EILSEQ)", function_start);
    return outcome;
  }
  const uint64_t size = function_bytes.size();
  if (probe_address < function_start || probe_address - function_start >= size) {
    outcome.verdict = Verdict::OutOfRange;
    outcome.reason = fmt::format("the function spans {:#x}..{:#x}", function_start, function_start + size);
    return outcome;
  }
  const uint64_t offset = probe_address - function_start;
  if (size - offset < kInsnSize) {
    outcome.verdict = Verdict::OutOfRange;
    outcome.reason = fmt::format("only {} of the instruction's 4 bytes are inside the function", size - offset);
    return outcome;
  }

  // Linear scan: a load-exclusive opens a sequence and the next store-exclusive closes it.
  // Fixed-width instructions need no boundary search, so unknown words on the way are skipped.
  // (A flag and an address, not std::optional: GCC 12 at -O2 warns maybe-uninitialized on it.)
  bool in_sequence = false;
  uint64_t sequence_start = 0;
  for (uint64_t at = 0; at < offset; at += kInsnSize) {
    const auto insn = insn::arm64::decode(function_bytes.subspan(at, kInsnSize), function_start + at);
    if (insn->exclusive == ExclusiveKind::Load) {
      in_sequence = true;
      sequence_start = function_start + at;
    }
    if (insn->exclusive == ExclusiveKind::Store) in_sequence = false;
  }

  const auto bytes = function_bytes.subspan(offset, kInsnSize);
  const auto insn = *insn::arm64::decode(bytes, probe_address);
  outcome.insn_address = probe_address;
  outcome.insn_length = kInsnSize;
  outcome.bytes.assign(bytes.begin(), bytes.end());
  if (insn.cls == InsnClass::Unallocated) {
    outcome.verdict = Verdict::UnknownInstruction;
    return outcome;
  }
  outcome.kind = std::string(insn::arm64::class_name(insn.cls));
  if (auto reason = probe_refusal(insn)) {
    outcome.verdict = Verdict::Unprobeable;
    outcome.reason = std::move(*reason);
    return outcome;
  }
  if (in_sequence) {
    outcome.verdict = Verdict::Unprobeable;
    outcome.reason = fmt::format(
        "it is inside the load-exclusive/store-exclusive sequence that starts at {:#x}: the breakpoint's exception "
        "clears the exclusive monitor, so the store-exclusive would fail every time",
        sequence_start);
    return outcome;
  }
  outcome.verdict = Verdict::Accepted;
  return outcome;
}

}  // namespace xprobe::arch::arm64
