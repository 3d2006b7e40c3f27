#include "arch/x86/x86_check.h"

#include <fmt/format.h>

#include <algorithm>

#include "arch/x86/x86_probe_policy.h"

namespace xprobe::arch::x86 {

using insn::x86::DecodeStatus;
using insn::x86::X86Insn;

namespace {

// The refusal carries the first bytes of the undecodable instruction, as the kernel's
// message does ("Unknown instruction: 48 8d 15 db ff ff ff 00 00 00").
constexpr size_t kUnknownInstructionBytes = 10;

CheckOutcome unknown_instruction(std::span<const uint8_t> bytes, size_t offset, uint64_t function_start,
                                 uint64_t probe_address) {
  CheckOutcome outcome;
  outcome.verdict = Verdict::UnknownInstruction;
  outcome.probe_address = probe_address;
  outcome.insn_address = function_start + offset;
  const size_t count = std::min(kUnknownInstructionBytes, bytes.size() - offset);
  outcome.bytes.assign(bytes.begin() + static_cast<ptrdiff_t>(offset),
                       bytes.begin() + static_cast<ptrdiff_t>(offset + count));
  return outcome;
}

void describe_insn(CheckOutcome& outcome, std::span<const uint8_t> bytes, size_t offset, const X86Insn& insn) {
  outcome.insn_address = insn.address;
  outcome.insn_length = insn.length;
  outcome.bytes.assign(bytes.begin() + static_cast<ptrdiff_t>(offset),
                       bytes.begin() + static_cast<ptrdiff_t>(offset + insn.length));
  outcome.kind = insn::x86::flow_kind_name(insn.flow);
}

}  // namespace

CheckOutcome check_probe_point(std::span<const uint8_t> function_bytes, uint64_t function_start, uint64_t probe_address,
                               const insn::x86::DecoderConfig& config) {
  CheckOutcome outcome;
  outcome.probe_address = probe_address;
  if (probe_address < function_start || probe_address - function_start >= function_bytes.size()) {
    outcome.verdict = Verdict::OutOfRange;
    outcome.reason = fmt::format("the function spans {:#x}-{:#x}", function_start,
                                 function_start + function_bytes.size());
    return outcome;
  }
  // Only a sweep from the function's first byte finds real boundaries (the seed's rule: a
  // probe goes on an instruction the decoder reached from the symbol address).
  const size_t target = static_cast<size_t>(probe_address - function_start);
  size_t offset = 0;
  X86Insn insn;
  for (;;) {
    const DecodeStatus status = insn::x86::decode(function_bytes.subspan(offset), function_start + offset, config, insn);
    if (status != DecodeStatus::Ok) return unknown_instruction(function_bytes, offset, function_start, probe_address);
    if (offset == target) break;
    if (offset + insn.length > target) {
      outcome.verdict = Verdict::NotOnBoundary;
      describe_insn(outcome, function_bytes, offset, insn);
      return outcome;
    }
    offset += insn.length;
  }
  describe_insn(outcome, function_bytes, offset, insn);
  if (const auto refusal = probe_refusal(insn)) {
    outcome.verdict = Verdict::Unprobeable;
    outcome.reason = *refusal;
  } else {
    outcome.verdict = Verdict::Accepted;
  }
  return outcome;
}

}  // namespace xprobe::arch::x86
