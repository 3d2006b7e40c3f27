#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "insn/x86/x86_insn.h"

namespace xprobe::insn::x86 {

// The vendor of the processor xprobe runs on (cpuid), the default for decoding.
Vendor host_vendor();

struct DecoderConfig {
  Mode mode = Mode::Long64;
  Vendor vendor = host_vendor();  // default: decode as the processor xprobe runs on would
};

// Decodes one instruction from `bytes` located at `address`. Never reads past bytes.size()
// and never past 15 bytes. On anything but Ok, `out` is unspecified except out.length,
// which holds how many bytes were examined.
DecodeStatus decode(std::span<const uint8_t> bytes, uint64_t address, const DecoderConfig& config, X86Insn& out);

const char* flow_kind_name(FlowKind kind);  // "none", "jmp", "jcc", "call", "ret", "loop", "ijmp", "icall", "int", "syscall", "iret", "far", "ud"

}  // namespace xprobe::insn::x86
