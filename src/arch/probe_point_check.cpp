#include "arch/probe_point_check.h"

#include "arch/arm64/arm64_check.h"
#include "arch/x86/x86_check.h"

namespace xprobe::arch {

CheckOutcome check_probe_point(insn::Arch arch, std::span<const uint8_t> function_bytes, uint64_t function_start,
                               uint64_t probe_address) {
  switch (arch) {
    case insn::Arch::X86_64:
    case insn::Arch::I386: {
      insn::x86::DecoderConfig config;
      config.mode = arch == insn::Arch::X86_64 ? insn::x86::Mode::Long64 : insn::x86::Mode::Protected32;
      config.vendor = insn::x86::host_vendor();
      return x86::check_probe_point(function_bytes, function_start, probe_address, config);
    }
    case insn::Arch::AArch64:
      return arm64::check_probe_point(function_bytes, function_start, probe_address);
  }
  CheckOutcome outcome;
  outcome.probe_address = probe_address;
  outcome.reason = "unsupported architecture";
  return outcome;
}

}  // namespace xprobe::arch
