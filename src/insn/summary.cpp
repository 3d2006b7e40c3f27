#include "insn/summary.h"

#include "insn/arm64/arm64_summary.h"
#include "insn/x86/decoder.h"

namespace xprobe::insn {

static std::optional<InsnSummary> summarize_x86(x86::Mode mode, std::span<const uint8_t> bytes, uint64_t address) {
  static const x86::DecoderConfig kHostConfig64{x86::Mode::Long64, x86::host_vendor()};
  static const x86::DecoderConfig kHostConfig32{x86::Mode::Protected32, x86::host_vendor()};
  x86::X86Insn insn;
  const auto& config = mode == x86::Mode::Long64 ? kHostConfig64 : kHostConfig32;
  if (x86::decode(bytes, address, config, insn) != x86::DecodeStatus::Ok) return std::nullopt;
  InsnSummary summary;
  summary.length = insn.length;
  summary.kind = x86::flow_kind_name(insn.flow);
  if (insn.has_rel_target) summary.target = insn.rel_target;
  return summary;
}

std::optional<InsnSummary> summarize(Arch arch, std::span<const uint8_t> bytes, uint64_t address) {
  switch (arch) {
    case Arch::X86_64: return summarize_x86(x86::Mode::Long64, bytes, address);
    case Arch::I386: return summarize_x86(x86::Mode::Protected32, bytes, address);
    case Arch::AArch64: return arm64::summarize(bytes, address);
  }
  return std::nullopt;
}

unsigned bad_insn_step(Arch arch) { return arch == Arch::AArch64 ? 4 : 1; }

}  // namespace xprobe::insn
