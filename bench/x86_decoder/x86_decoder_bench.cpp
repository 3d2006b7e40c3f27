// Decodes the whole .text of libc.so.6 in a linear sweep with xprobe's decoder, Zydis 4
// (ZydisDecoderDecodeInstruction, no operands) and Capstone 4 (detail off, cs_disasm_iter),
// in one run; an undecodable byte is skipped for all alike. Reports instructions per
// second for each and the ratios. `--markdown` prints only a summary table.
#include <Zydis/Zydis.h>
#include <benchmark/benchmark.h>
#include <capstone/capstone.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "insn/x86/decoder.h"
#include "x86_diff/code_section.h"

namespace {

using xprobe::insn::x86::DecodeStatus;
using xprobe::insn::x86::DecoderConfig;
using xprobe::insn::x86::Mode;
using xprobe::insn::x86::Vendor;
using xprobe::insn::x86::X86Insn;
using xprobe::test::x86::CodeSection;

constexpr const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";

const CodeSection& libc_text() {
  static const CodeSection section = [] {
    auto read = xprobe::test::x86::read_code_section(kLibc, ".text");
    if (!read) {
      std::fprintf(stderr, "%s\n", read.error().message.c_str());
      std::exit(2);
    }
    return std::move(read).value();
  }();
  return section;
}

// One linear sweep; `decode_one(offset)` returns the instruction length or 0 when invalid.
template <typename DecodeOne>
void sweep(benchmark::State& state, DecodeOne&& decode_one) {
  const size_t size = libc_text().bytes.size();
  uint64_t instructions = 0;
  uint64_t invalid = 0;
  for (auto _ : state) {
    instructions = 0;
    invalid = 0;
    size_t offset = 0;
    while (offset < size) {
      const size_t length = decode_one(offset);
      if (length == 0) {
        ++invalid;
        ++offset;
      } else {
        ++instructions;
        offset += length;
      }
    }
    benchmark::DoNotOptimize(instructions);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(instructions) * state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(size) * state.iterations());
  state.counters["insns_per_sweep"] = static_cast<double>(instructions);
  state.counters["invalid_bytes"] = static_cast<double>(invalid);
}

void BM_Xprobe(benchmark::State& state) {
  const CodeSection& text = libc_text();
  const DecoderConfig config{Mode::Long64, Vendor::Intel};
  X86Insn insn;
  sweep(state, [&](size_t offset) -> size_t {
    const std::span<const uint8_t> rest(text.bytes.data() + offset, text.bytes.size() - offset);
    return xprobe::insn::x86::decode(rest, text.address + offset, config, insn) == DecodeStatus::Ok ? insn.length : 0;
  });
}

void zydis_sweep(benchmark::State& state, bool minimal) {
  const CodeSection& text = libc_text();
  ZydisDecoder decoder;
  ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  if (minimal) ZydisDecoderEnableMode(&decoder, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
  ZydisDecodedInstruction insn;
  sweep(state, [&](size_t offset) -> size_t {
    return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, nullptr, text.bytes.data() + offset,
                                                      text.bytes.size() - offset, &insn))
               ? insn.length
               : 0;
  });
}

void BM_Zydis(benchmark::State& state) { zydis_sweep(state, false); }
void BM_ZydisMinimal(benchmark::State& state) { zydis_sweep(state, true); }

void BM_Capstone(benchmark::State& state) {
  const CodeSection& text = libc_text();
  csh handle;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
    state.SkipWithError("cs_open failed");
    return;
  }
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_OFF);
  cs_insn* insn = cs_malloc(handle);
  sweep(state, [&](size_t offset) -> size_t {
    const uint8_t* code = text.bytes.data() + offset;
    size_t size = text.bytes.size() - offset;
    uint64_t address = text.address + offset;
    return cs_disasm_iter(handle, &code, &size, &address, insn) ? insn->size : 0;
  });
  cs_free(insn, 1);
  cs_close(&handle);
}

BENCHMARK(BM_Xprobe)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Zydis)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ZydisMinimal)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Capstone)->Unit(benchmark::kMillisecond);

// Keeps each benchmark's instructions per second for the ratios; prints like the console
// reporter unless only the table is wanted.
class RateCollector : public benchmark::ConsoleReporter {
 public:
  explicit RateCollector(bool quiet) : quiet_(quiet) {}
  bool ReportContext(const Context& context) override { return quiet_ || ConsoleReporter::ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      // With --benchmark_repetitions the median of the repetitions stands for the benchmark
      // (the machine is shared; single runs wander); without, the one run does.
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      const std::string name = run.run_name.str();
      if (!median && medians_.count(name) != 0) continue;
      if (median) medians_.insert(name);
      const auto rate = run.counters.find("items_per_second");
      const auto count = run.counters.find("insns_per_sweep");
      if (rate != run.counters.end()) rates[name] = rate->second.value;
      if (count != run.counters.end()) counts[name] = count->second.value;
    }
    if (!quiet_) ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> rates;
  std::map<std::string, double> counts;

 private:
  bool quiet_;
  std::set<std::string> medians_;
};

// "BM_Zydis" names the run "BM_Zydis" or "BM_Zydis/<arguments>", never "BM_ZydisMinimal".
bool is_run_of(const std::string& run_name, const std::string& benchmark) {
  return run_name == benchmark || run_name.rfind(benchmark + "/", 0) == 0;
}

double value_of(const std::map<std::string, double>& values, const std::string& benchmark) {
  for (const auto& [name, value] : values)
    if (is_run_of(name, benchmark)) return value;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool markdown = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--markdown") == 0)
      markdown = true;
    else
      args.push_back(argv[i]);
  }
  int benchmark_argc = static_cast<int>(args.size());
  benchmark::Initialize(&benchmark_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(benchmark_argc, args.data())) return 1;
  libc_text();
  RateCollector collector(markdown);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  const double xprobe = value_of(collector.rates, "BM_Xprobe");
  const double zydis = value_of(collector.rates, "BM_Zydis");
  const double capstone = value_of(collector.rates, "BM_Capstone");
  struct Row {
    const char* name;
    const char* benchmark;
    double rate;
  };
  const Row rows[] = {{"xprobe", "BM_Xprobe", xprobe},
                      {"Zydis 4 (DecodeInstruction, no operands)", "BM_Zydis", zydis},
                      {"Zydis 4 (MINIMAL mode)", "BM_ZydisMinimal", value_of(collector.rates, "BM_ZydisMinimal")},
                      {"Capstone 4 (detail off)", "BM_Capstone", capstone}};
  std::printf("\nlibc .text: %s, %zu bytes; linear sweep, an invalid byte skipped for all alike.\n"
              "Rates: instructions per CPU second (median of the repetitions when repeated).\n\n",
              kLibc, libc_text().bytes.size());
  std::printf("| decoder | M insn/s | ratio to Zydis | insns per sweep |\n|---|---:|---:|---:|\n");
  for (const Row& row : rows) {
    std::printf("| %s | %.1f | %s | %.0f |\n", row.name, row.rate / 1e6,
                zydis > 0 ? fmt::format("{:.2f}x", row.rate / zydis).c_str() : "-", value_of(collector.counts, row.benchmark));
  }
  if (xprobe > 0 && zydis > 0) std::printf("\nxprobe/Zydis = %.2f\n", xprobe / zydis);
  if (xprobe > 0 && capstone > 0) std::printf("xprobe/Capstone = %.2f\n", xprobe / capstone);
  return 0;
}
