// How many events per second the ftrace text formatter turns into lines, with no traced
// process: the records are those of bench/peers/xprobe.sh's throughput run (probe `work`,
// a=%di:s64 b=%si:s64, thread "work_bench"), so events/s here bound what `xprobe trace -o`
// can sustain. Run: build-rel/bench/trace_format/trace_format_bench
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probe/definition_parser.h"
#include "trace/event_output.h"
#include "trace/ftrace/ftrace_formatter.h"
#include "trace/output_format.h"
#include "trace/probe_statistics.h"

namespace xprobe::trace {
namespace {

constexpr size_t kRecords = 4096;  // distinct records cycled through, so no line is a cache replay

struct Workload {
  EventCatalog catalog;
  std::vector<EventRecord> records;
};

Workload make_workload(const std::string& definition) {
  auto parsed = probe::parse_definition(definition);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.error().render().c_str());
    std::exit(1);
  }
  Workload w;
  w.catalog = {describe_event(parsed.value())};
  uint64_t ns = 441'094'151'000;
  for (size_t i = 0; i < kRecords; ++i) {
    EventRecord r;
    r.tid = 95590 + static_cast<int32_t>(i % 4);
    r.comm = "work_bench";
    r.cpu = static_cast<uint32_t>(i % 2);
    r.timestamp_ns = ns += 213;
    r.address = 0x55ef9f203149;
    // a: a small positive number, b: a negative one (the s64 minus sign path).
    uint64_t raw = i * 7919 % 100000;
    for (const auto& argument : parsed.value().arguments) {
      probe::FetchedValue value;
      value.type = argument.type;
      value.numbers = {raw};
      r.values.push_back(std::move(value));
      raw = static_cast<uint64_t>(-static_cast<int64_t>(i + 1));
    }
    w.records.push_back(std::move(r));
  }
  return w;
}

const std::string kTwoIntegers = "p:bench/work /bin/true:0x1000 a=%di:s64 b=%si:s64";

// One line appended to a reused buffer, as the trace session's writer does.
void BM_FtraceLine(benchmark::State& state) {
  const Workload w = make_workload(kTwoIntegers);
  const FormatContext context{w.catalog, {}};
  auto writer = make_ftrace_writer(context);
  std::string line;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    line.clear();
    writer->write(w.records[i++ % w.records.size()], line);
    bytes += line.size();
    benchmark::DoNotOptimize(line.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_FtraceLine);

// The line through EventOutput (its 64 KiB buffer, write(2) when full) into /dev/null.
void BM_FtraceLineToOutput(benchmark::State& state) {
  const Workload w = make_workload(kTwoIntegers);
  const FormatContext context{w.catalog, {}};
  auto writer = make_ftrace_writer(context);
  ProbeStatistics statistics;
  const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    state.SkipWithError("cannot open /dev/null");
    return;
  }
  EventOutput output(fd, true, false, statistics);
  std::string line;
  size_t i = 0;
  for (auto _ : state) {
    line.clear();
    const EventRecord& record = w.records[i++ % w.records.size()];
    writer->write(record, line);
    output.write_event(record.probe_id, line, record.timestamp_ns);
  }
  output.flush();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FtraceLineToOutput);

}  // namespace
}  // namespace xprobe::trace

BENCHMARK_MAIN();
