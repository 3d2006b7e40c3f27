#include "trace/ftrace/ftrace_formatter.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <climits>

#include "fake_process.h"
#include "probe/definition_parser.h"
#include "probe/fetch_program.h"

namespace xprobe::trace {
namespace {

using probe::testing::FakeMemory;
using probe::testing::FakeRegisters;

TEST(FtraceHeader, MatchesTheKernelsDefaultIrqInfoHeader) {
  // cat -A /sys/kernel/tracing/trace on this machine (6.18), copied by hand.
  EXPECT_EQ(ftrace_header(3, 3, 2),
            "# tracer: nop\n"
            "#\n"
            "# entries-in-buffer/entries-written: 3/3   #P:2\n"
            "#\n"
            "#                                _-----=> irqs-off/BH-disabled\n"
            "#                               / _----=> need-resched\n"
            "#                              | / _---=> hardirq/softirq\n"
            "#                              || / _--=> preempt-depth\n"
            "#                              ||| / _-=> migrate-disable\n"
            "#                              |||| /     delay\n"
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
            "#              | |         |   |||||     |         |\n");
}

TEST(FtraceHeader, WithoutIrqInfo) {
  EXPECT_EQ(ftrace_header(0, 0, 2, FtraceOptions{false}),
            "# tracer: nop\n"
            "#\n"
            "# entries-in-buffer/entries-written: 0/0   #P:2\n"
            "#\n"
            "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
            "#              | |         |         |         |\n");
}

TEST(FtraceTimestamp, RoundsToTheMicrosecondAndWidens) {
  EXPECT_EQ(format_timestamp(441094151000ull), "  441.094151");
  EXPECT_EQ(format_timestamp(441094151499ull), "  441.094151");
  EXPECT_EQ(format_timestamp(441094151500ull), "  441.094152");
  EXPECT_EQ(format_timestamp(0), "    0.000000");
  EXPECT_EQ(format_timestamp(258544995456000ull), "258544.995456");
}

class KernelLineTest : public ::testing::Test {
 protected:
  // Parses `definition`, fetches its arguments from the fake process, formats one line.
  std::string line(const std::string& definition, uint64_t address, std::optional<uint64_t> function,
                   uint64_t timestamp_ns, FtraceOptions options = {}) {
    auto parsed = probe::parse_definition(definition);
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().render());
    if (!parsed.ok()) return {};
    const probe::ProbeFetchPlan plan = probe::compile_fetch_plan(parsed.value(), insn::Arch::X86_64);
    catalog = {describe_event(parsed.value())};
    EventRecord record;
    record.probe_id = 0;
    record.tid = 9559;
    record.comm = "t";
    record.cpu = 1;
    record.timestamp_ns = timestamp_ns;
    record.address = address;
    record.function_address = function;
    const probe::FetchEnvironment environment{registers, memory, record.comm, function ? std::optional(address) : std::nullopt, {}};
    record.values = probe::run_all(plan, environment);
    return format_ftrace_event(record, catalog, {}, options);
  }

  void SetUp() override {
    registers.values[14] = 0x7ffc3a2118d0;  // %di -> { a:3=5, b:5=0, c:24=0; int arr[4]; char* name = NULL }
    memory.map(0x7ffc3a2118d0, std::vector<uint8_t>(28, 0));
    memory.ranges[0x7ffc3a2118d0][0] = 5;
    registers.values[13] = 0x5000;  // %si -> "world\n\"q"
    memory.map_string(0x5000, "world\n\"q");
    registers.values[12] = 0x10;    // %dx: a bad pointer
    registers.values[11] = 0xfffffffffffffffbull;  // %cx = -5
    registers.values[10] = 0x18;    // %ax
    registers.values[19] = 0x7ffc3a2118c8;  // %sp -> return address
    memory.map(0x7ffc3a2118c8, {0xa3, 0x31, 0x20, 0x9f, 0xef, 0x55, 0, 0});
  }

  FakeRegisters registers;
  FakeMemory memory;
  EventCatalog catalog;
};

TEST_F(KernelLineTest, EntryEventLikeTheKernelPrintedIt) {
  // The kernel's line for the same definition on the same data (the flags column the kernel
  // printed was "DBZff"; ours is always "....."). The string value holds a real newline.
  const std::string kernel =
      "               t-9559    [001] .....   441.094151: xpt: (0x55ef9f203149) s=0x7ffc3a2118d0 a=5 b=0 c=0 "
      "arr={0,0,0,0} name=(fault) str=\"world\n\"q\" bad=0 badstr=(fault) neg=-5 negx=0xfffffffb ch='w' "
      "chs={'w','o','r'} u8=251 comm=\"t\" imm=0x7b st=0x7ffc3a2118c8 st0=0x55ef9f2031a3 strarr={(fault)} x8=0xfb "
      "x16=0xfffb s16=-5 dflt=0xfffffffffffffffb\n";
  EXPECT_EQ(line("p:xpt /tmp/xp/t:0x1149 s=%di:x64 a=+0(%di):b3@0/32 b=+0(%di):b5@3/32 c=+0(%di):b24@8/32 "
                 "arr=+4(%di):s32[4] name=+0(+20(%di)):string str=+0(%si):string bad=+0(%dx):u64 "
                 "badstr=+0(%dx):string neg=%cx:s64 negx=%cx:x32 ch=+0(%si):char chs=+0(%si):char[3] u8=%cx:u8 "
                 "comm=$comm imm=\\123 st=$stack st0=$stack0 strarr=+20(%di):string[1] x8=%cx:x8 x16=%cx:x16 "
                 "s16=%cx:s16 dflt=%cx",
                 0x55ef9f203149, std::nullopt, 441094151000ull),
            kernel);
}

TEST_F(KernelLineTest, ReturnEventLikeTheKernelPrintedIt) {
  memory.map(0x7ffc3a2118c8, {5, 0, 0});
  const std::string kernel =
      "               t-9559    [001] .....   441.094192: xptr: (0x55ef9f2031a3 <- 0x55ef9f203149) rv=0x18 d=0x18 "
      "badarr={0,0} badx=0x0 str2={(fault),(fault)} sx={0x5,0x0,0x0}\n";
  EXPECT_EQ(line("r:xptr /tmp/xp/t:0x1149 rv=$retval d=%ax badarr=+0(%dx):u16[2] badx=+0(%dx):x32 "
                 "str2=+0(%dx):string[2] sx=+0(%sp):x8[3]",
                 0x55ef9f2031a3, 0x55ef9f203149, 441094192000ull),
            kernel);
}

TEST_F(KernelLineTest, WithoutIrqInfoAndGeneratedNames) {
  EXPECT_EQ(line("p /tmp/xp/t:0x1149 %ax", 0x5573da502149, std::nullopt, 456544191000ull, FtraceOptions{false}),
            "               t-9559    [001]    456.544191: p_t_0x1149: (0x5573da502149) arg1=0x18\n");
}

TEST(FtraceEvent, LongCommAndPidAndUnknownProbe) {
  EventRecord record;
  record.probe_id = 7;
  record.tid = 12345678;
  record.comm = "a-very-long-name";
  record.cpu = 12;
  record.address = 0x401000;
  EXPECT_EQ(format_ftrace_event(record, {}),
            "a-very-long-name-12345678 [012] .....     0.000000: probe7: (0x401000)\n");
}

TEST(FtraceEvent, SymbolArguments) {
  EventCatalog catalog(1);
  catalog[0].event = "ev";
  catalog[0].argument_names = {"fn", "where"};
  EventRecord record;
  record.comm = "bash";
  record.tid = 24842;
  record.cpu = 6;
  record.timestamp_ns = 258544995456000ull;
  record.address = 0x446420;
  probe::FetchedValue symbol;
  symbol.type.kind = probe::TypeKind::Symbol;
  symbol.numbers = {0x446430};
  probe::FetchedValue unknown;
  unknown.type.kind = probe::TypeKind::Symbol;
  unknown.numbers = {0x999};
  record.values = {symbol, unknown};
  const Symbolizer symbolizer = [](uint64_t address) -> std::optional<std::string> {
    if (address >= 0x446420 && address < 0x446432) return "zfree+0x" + std::to_string(address - 0x446420) + "/0x12";
    return std::nullopt;
  };
  EXPECT_EQ(format_ftrace_event(record, catalog, symbolizer),
            "            bash-24842   [006] ..... 258544.995456: ev: (0x446420) fn=zfree+0x16/0x12 where=0x999\n");
}

}  // namespace
}  // namespace xprobe::trace

namespace xprobe::trace {
namespace {

TEST(FtraceEvent, SymbolicAddressesAsKprobeEventsPrintThem) {
  // kprobetrace.rst: "myprobe: (do_sys_open+0x0/0xd6) ..." and
  // "myretprobe: (sys_open+0x1b/0x1d <- do_sys_open) ..."
  EventCatalog catalog(2);
  catalog[0].event = "myprobe";
  catalog[1].event = "myretprobe";
  const Symbolizer symbolizer = [](uint64_t address) -> std::optional<std::string> {
    if (address == 0x1000) return std::string("do_sys_open+0x0/0xd6");
    if (address == 0x201b) return std::string("sys_open+0x1b/0x1d");
    return std::nullopt;
  };
  FtraceOptions options;
  options.irq_info = false;
  options.symbolic_addresses = true;
  EventRecord entry;
  entry.comm = "<...>";
  entry.tid = 1447;
  entry.cpu = 1;
  entry.timestamp_ns = 1038282286875000ull;
  entry.address = 0x1000;
  EXPECT_EQ(format_ftrace_event(entry, catalog, symbolizer, options),
            "           <...>-1447    [001]  1038282.286875: myprobe: (do_sys_open+0x0/0xd6)\n");
  EventRecord exit = entry;
  exit.probe_id = 1;
  exit.address = 0x201b;
  exit.function_address = 0x1000;
  EXPECT_EQ(format_ftrace_event(exit, catalog, symbolizer, options),
            "           <...>-1447    [001]  1038282.286875: myretprobe: (sys_open+0x1b/0x1d <- do_sys_open)\n");
  exit.address = 0x9999;  // unknown: stays hexadecimal
  EXPECT_EQ(format_ftrace_event(exit, catalog, symbolizer, options),
            "           <...>-1447    [001]  1038282.286875: myretprobe: (0x9999 <- do_sys_open)\n");
}

TEST(FtraceLinePrefix, MatchesThePrintfFormatTheKernelUsesAtEveryEdge) {
  // The line's head is the kernel's "%16s-%-7d [%03d] %s %5lu.%06lu: ": written out by hand
  // for speed, so it is checked against that format (in fmt's spelling) at the edges: widths
  // exceeded, negative tids, zero, the largest values, a comm of 0, 15 and 16+ bytes and one
  // fmt pads by display width (UTF-8).
  EventCatalog catalog(1);
  catalog[0].event = "e";
  const std::vector<std::string> comms = {"", "t", "work_bench", "fifteen_chars__", "sixteen_chars___",
                                          "a-much-longer-name-than-any-comm-xx", "caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac"};
  const std::vector<int32_t> tids = {0, 1, 9559, 999999, 1000000, 12345678, -1, -123456, INT32_MIN, INT32_MAX};
  const std::vector<uint32_t> cpus = {0, 7, 99, 100, 999, 1000, UINT32_MAX};
  const std::vector<uint64_t> times = {0, 499, 500, 441094151499ull, 99999999999499ull, 99999999999500ull,
                                       258544995456000ull, UINT64_MAX - 500};
  for (const bool irq_info : {true, false}) {
    FtraceOptions options;
    options.irq_info = irq_info;
    for (const auto& comm : comms)
      for (const int32_t tid : tids)
        for (const uint32_t cpu : cpus)
          for (const uint64_t ns : times) {
            EventRecord record;
            record.comm = comm;
            record.tid = tid;
            record.cpu = cpu;
            record.timestamp_ns = ns;
            record.address = 0x401000;
            const uint64_t micros = (ns + 500) / 1000;
            const std::string expected =
                fmt::format("{:>16}-{:<7} [{:03}] {}{:5}.{:06}: e: (0x401000)\n", comm, tid, cpu,
                            irq_info ? "..... " : " ", micros / 1000000, micros % 1000000);
            ASSERT_EQ(format_ftrace_event(record, catalog, {}, options), expected)
                << "comm " << comm << " tid " << tid << " cpu " << cpu << " ns " << ns;
          }
  }
}

}  // namespace
}  // namespace xprobe::trace
