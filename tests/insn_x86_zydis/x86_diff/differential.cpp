#include "x86_diff/differential.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/hex.h"

namespace xprobe::test::x86 {

using insn::x86::DecodeStatus;
using insn::x86::Mode;
using insn::x86::Vendor;

const char* decode_status_name(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::Ok: return "ok";
    case DecodeStatus::Truncated: return "truncated";
    case DecodeStatus::TooLong: return "too-long";
    case DecodeStatus::Invalid: return "invalid";
  }
  return "?";
}

Comparison compare_decoders(std::span<const uint8_t> bytes, const insn::x86::DecoderConfig& config,
                            const ZydisOracle& oracle) {
  Comparison comparison;
  comparison.bytes = bytes;
  comparison.config = config;
  comparison.ours = insn::x86::decode(bytes, 0x401000, config, comparison.insn);
  comparison.zydis = oracle.decode(bytes);
  if (!comparison.agrees()) comparison.shape = scan_raw_shape(bytes, config.mode);
  return comparison;
}

bool Comparison::agrees() const {
  if (ours != zydis.status) return false;
  return ours != DecodeStatus::Ok || insn.length == zydis.length;
}

namespace {

std::string verdict(DecodeStatus status, uint8_t length) {
  return status == DecodeStatus::Ok ? fmt::format("ok({})", length) : decode_status_name(status);
}

std::string zydis_verdict(const OracleResult& zydis) {
  return zydis.status == DecodeStatus::Ok ? fmt::format("ok({})", zydis.length) : zydis_status_name(zydis.zydis_status);
}

}  // namespace

std::string Comparison::disagreement_class() const {
  const char* mode = config.mode == Mode::Long64 ? "64" : "32";
  std::string what;
  if (ours == DecodeStatus::Ok && zydis.status == DecodeStatus::Ok) {
    what = "length-differs";
  } else {
    // Classes by verdict kind only (lengths vary within one opcode class).
    const std::string ours_text = ours == DecodeStatus::Ok ? "ok" : decode_status_name(ours);
    const std::string zydis_text = zydis.status == DecodeStatus::Ok ? "ok" : zydis_status_name(zydis.zydis_status);
    what = "ours=" + ours_text + " zydis=" + zydis_text;
  }
  return fmt::format("{} {} {}", mode, what, describe_opcode_class(shape));
}

std::string describe_case(const Comparison& comparison) {
  return fmt::format("{} [{} {}] ours={} zydis={}", format_hex_bytes(comparison.bytes),
                     comparison.config.mode == Mode::Long64 ? "64-bit" : "32-bit",
                     comparison.config.vendor == Vendor::Intel ? "intel" : "amd",
                     verdict(comparison.ours, comparison.insn.length), zydis_verdict(comparison.zydis));
}

void DisagreementTally::add(const Comparison& comparison, const char* mutation) {
  ++total_;
  ClassStats& stats = classes_[comparison.disagreement_class()];
  if (stats.count++ == 0) stats.example = describe_case(comparison) + " (" + mutation + ")";
}

void DisagreementTally::add_expected(const ExpectedException& exception) { ++expected_[exception.name]; }

std::string DisagreementTally::report(size_t limit) const {
  std::vector<std::pair<std::string, const ClassStats*>> sorted;
  for (const auto& [name, stats] : classes_) sorted.emplace_back(name, &stats);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i)
    text += fmt::format("  {:>8}  {}\n            e.g. {}\n", sorted[i].second->count, sorted[i].first,
                        sorted[i].second->example);
  if (sorted.size() > limit) text += fmt::format("  ... and {} more classes\n", sorted.size() - limit);
  return text;
}

std::string DisagreementTally::expected_report() const {
  std::string text;
  for (const auto& [name, count] : expected_) text += fmt::format("  {:>8}  {}\n", count, name);
  return text;
}

const ExpectedException* find_expected_exception(const Comparison& comparison) {
  for (const ExpectedException& exception : expected_exceptions())
    if (exception.matches(comparison)) return &exception;
  return nullptr;
}

}  // namespace xprobe::test::x86
