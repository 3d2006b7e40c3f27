#include "insn/x86/decoder.h"
namespace xprobe::insn::x86 {
Vendor host_vendor() { return Vendor::Amd; }
DecodeStatus decode(std::span<const uint8_t>, uint64_t, const DecoderConfig&, X86Insn& out) { out.length = 0; return DecodeStatus::Invalid; }
const char* flow_kind_name(FlowKind) { return "none"; }
}  // namespace xprobe::insn::x86
