#include "arch/x86/x86_check.h"
namespace xprobe::arch::x86 {
CheckOutcome check_probe_point(std::span<const uint8_t>, uint64_t, uint64_t probe_address, const insn::x86::DecoderConfig&) {
  CheckOutcome o; o.probe_address = probe_address; o.reason = "x86 checker not built yet"; return o;
}
}  // namespace xprobe::arch::x86
