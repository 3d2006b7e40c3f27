#include <fmt/format.h>

#include "arch/probe_point_check.h"
#include "support/hex.h"

namespace xprobe::arch {

std::string CheckOutcome::message() const {
  const std::string head = fmt::format("Could not insert probe at address {:#x} due to: ", probe_address);
  switch (verdict) {
    case Verdict::Accepted:
      return fmt::format("Probe at address {:#x} accepted: {} ({} bytes, {})", probe_address, format_hex_bytes(bytes),
                         insn_length, kind);
    case Verdict::NotOnBoundary:
      return head + fmt::format("not on an instruction boundary: it is inside the instruction at {:#x} ({})",
                                insn_address, format_hex_bytes(bytes));
    case Verdict::UnknownInstruction:
      return head + "Unknown instruction: " + format_hex_bytes(bytes);
    case Verdict::Unprobeable:
      // The kind says little when it is "none" (no control flow): the reason says it all.
      if (kind.empty() || kind == "none") return head + fmt::format("cannot probe the instruction {}: {}", format_hex_bytes(bytes), reason);
      return head + fmt::format("cannot probe the instruction {} ({}): {}", format_hex_bytes(bytes), kind, reason);
    case Verdict::Misaligned:
      return head + fmt::format("misaligned address: {}", reason.empty() ? "not an instruction boundary" : reason);
    case Verdict::OutOfRange:
      return head + fmt::format("address outside the function ({})", reason);
  }
  return head + "unknown verdict";
}

}  // namespace xprobe::arch
