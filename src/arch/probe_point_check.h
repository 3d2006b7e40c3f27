#pragma once
// The safety checker: may a probe go at this address? Decodes from the function's start
// forward to the probe address, so only real instruction boundaries are accepted.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "insn/arch.h"

namespace xprobe::arch {

enum class Verdict : uint8_t {
  Accepted,
  NotOnBoundary,       // the address is inside an instruction
  UnknownInstruction,  // an undecodable instruction between the function start and the probe
  Unprobeable,         // decoded, but must not be probed (reason says why)
  Misaligned,          // AArch64: not a multiple of 4 (the kernel's -EILSEQ)
  OutOfRange,          // the address is not inside the function's bytes
};

struct CheckOutcome {
  Verdict verdict = Verdict::OutOfRange;
  uint64_t probe_address = 0;
  uint64_t insn_address = 0;   // the instruction the verdict is about
  uint8_t insn_length = 0;
  std::vector<uint8_t> bytes;  // that instruction's bytes (UnknownInstruction: up to 10 from its start)
  std::string kind;            // its control-flow kind or class, when decoded
  std::string reason;          // Unprobeable: why

  bool accepted() const { return verdict == Verdict::Accepted; }
  // One line for the user, e.g.
  // "Could not insert probe at address 0x401126 due to: Unknown instruction: 48 8d 15 ..."
  std::string message() const;
};

CheckOutcome check_probe_point(insn::Arch arch, std::span<const uint8_t> function_bytes, uint64_t function_start,
                               uint64_t probe_address);

}  // namespace xprobe::arch
