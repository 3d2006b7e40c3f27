#include "x86_diff/zydis_oracle.h"

#include <stdexcept>

namespace xprobe::test::x86 {

using insn::x86::DecodeStatus;
using insn::x86::Mode;
using insn::x86::Vendor;

ZydisOracle::ZydisOracle(const insn::x86::DecoderConfig& config) : config_(config) {
  const bool long64 = config.mode == Mode::Long64;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder_, long64 ? ZYDIS_MACHINE_MODE_LONG_64 : ZYDIS_MACHINE_MODE_LEGACY_32,
                                   long64 ? ZYDIS_STACK_WIDTH_64 : ZYDIS_STACK_WIDTH_32)))
    throw std::runtime_error("ZydisDecoderInit failed");
  // Our target is the processor and objdump 2.40's ISA coverage: every extension that
  // reuses hint-NOP / prefix space is decoded as the extension (objdump prints bndmov,
  // endbr64, lzcnt, tzcnt, wbnoinvd, cldemote), Knights Corner's MVEX is not (objdump
  // decodes 62 as EVEX only).
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_FALSE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_AMD_BRANCHES, config.vendor == Vendor::Amd ? ZYAN_TRUE : ZYAN_FALSE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_KNC, ZYAN_FALSE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_MPX, ZYAN_TRUE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_CET, ZYAN_TRUE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_LZCNT, ZYAN_TRUE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_TZCNT, ZYAN_TRUE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_WBNOINVD, ZYAN_TRUE);
  ZydisDecoderEnableMode(&decoder_, ZYDIS_DECODER_MODE_CLDEMOTE, ZYAN_TRUE);
}

OracleResult ZydisOracle::decode(std::span<const uint8_t> bytes) const {
  OracleResult result;
  result.zydis_status = ZydisDecoderDecodeInstruction(&decoder_, nullptr, bytes.data(), bytes.size(), &result.insn);
  if (ZYAN_SUCCESS(result.zydis_status)) {
    result.status = DecodeStatus::Ok;
    result.length = result.insn.length;
  } else if (result.zydis_status == ZYDIS_STATUS_NO_MORE_DATA) {
    result.status = DecodeStatus::Truncated;
  } else if (result.zydis_status == ZYDIS_STATUS_INSTRUCTION_TOO_LONG) {
    result.status = DecodeStatus::TooLong;
  } else {
    result.status = DecodeStatus::Invalid;
  }
  return result;
}

const char* zydis_status_name(ZyanStatus status) {
  switch (status) {
    case ZYAN_STATUS_SUCCESS: return "SUCCESS";
    case ZYDIS_STATUS_NO_MORE_DATA: return "NO_MORE_DATA";
    case ZYDIS_STATUS_DECODING_ERROR: return "DECODING_ERROR";
    case ZYDIS_STATUS_INSTRUCTION_TOO_LONG: return "INSTRUCTION_TOO_LONG";
    case ZYDIS_STATUS_BAD_REGISTER: return "BAD_REGISTER";
    case ZYDIS_STATUS_ILLEGAL_LOCK: return "ILLEGAL_LOCK";
    case ZYDIS_STATUS_ILLEGAL_LEGACY_PFX: return "ILLEGAL_LEGACY_PFX";
    case ZYDIS_STATUS_ILLEGAL_REX: return "ILLEGAL_REX";
    case ZYDIS_STATUS_INVALID_MAP: return "INVALID_MAP";
    case ZYDIS_STATUS_MALFORMED_EVEX: return "MALFORMED_EVEX";
    case ZYDIS_STATUS_MALFORMED_MVEX: return "MALFORMED_MVEX";
    case ZYDIS_STATUS_INVALID_MASK: return "INVALID_MASK";
    default: return "OTHER";
  }
}

}  // namespace xprobe::test::x86
