#pragma once
// Zydis 4 configured like xprobe's decoder (mode, vendor, ISA-extension modes), used as the
// reference the differential test and the long run compare against. Test-only.
#include <Zydis/Zydis.h>

#include <cstdint>
#include <span>

#include "insn/x86/decoder.h"

namespace xprobe::test::x86 {

struct OracleResult {
  insn::x86::DecodeStatus status = insn::x86::DecodeStatus::Invalid;
  uint8_t length = 0;                  // valid when status is Ok
  ZyanStatus zydis_status = ZYAN_STATUS_SUCCESS;
  ZydisDecodedInstruction insn{};      // valid when status is Ok
};

class ZydisOracle {
 public:
  explicit ZydisOracle(const insn::x86::DecoderConfig& config);
  OracleResult decode(std::span<const uint8_t> bytes) const;
  const insn::x86::DecoderConfig& config() const { return config_; }

 private:
  insn::x86::DecoderConfig config_;
  ZydisDecoder decoder_{};
};

// "DECODING_ERROR", "ILLEGAL_LOCK", ...: the name of a Zydis decoder status.
const char* zydis_status_name(ZyanStatus status);

}  // namespace xprobe::test::x86
