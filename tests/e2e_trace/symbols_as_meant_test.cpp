// Symbols as users mean them: glibc's IFUNCs traced at the implementation the dynamic linker
// chose (with a program whose call counts are known), a named glob as one event with a
// summary row per function, and stripped code delimited by .eh_frame (the kernel's uprobes
// as the oracle for the hits).
#include <limits.h>
#include <stdlib.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

std::string libc_path() {
  char real[PATH_MAX];
  return realpath("/lib/x86_64-linux-gnu/libc.so.6", real) != nullptr ? std::string(real) : std::string();
}

// Events of `name` between the first "open" and the first "close" event after it.
size_t count_in_window(const std::vector<TraceEvent>& events, const std::string& name) {
  size_t n = 0;
  bool open = false;
  for (const TraceEvent& event : events) {
    if (event.event == "open") open = true;
    else if (event.event == "close" && open) break;
    else if (open && event.event == name) ++n;
  }
  return n;
}

std::string run_text(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string text;
  char buffer[4096];
  size_t n;
  while (pipe && (n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) text.append(buffer, n);
  return text;
}

TEST(SymbolsAsMeant, GlibcIfuncsAreTracedAtTheImplementationTheLinkerChose) {
  const std::string libc = libc_path();
  ASSERT_FALSE(libc.empty());
  const std::vector<std::string> program = {STRING_CALLS_PATH, "1000", "700", "300"};
  const RunResult untraced = run_untraced(program);
  ASSERT_EQ(untraced.exit_status, 0);
  for (const char* engine : {"trap", "auto"}) {
    SCOPED_TRACE(engine);
    const TracedRun run = run_xprobe({"--engine", engine, "--summary", "-e", "p:s/open window_open", "-e",
                                      "p:s/close window_close", "-e", "p:s/memcpy libc.so.6:memcpy", "-e",
                                      "p:s/strlen libc.so.6:strlen", "-e", "p:s/memset libc.so.6:memset"},
                                     program);
    EXPECT_EQ(run.program_output, untraced.output) << run.diagnostics;
    EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
    // The program's own record: exactly its calls, none of the resolver's.
    EXPECT_EQ(count_in_window(run.events, "memcpy"), 1000u) << run.diagnostics;
    EXPECT_EQ(count_in_window(run.events, "strlen"), 700u) << run.diagnostics;
    EXPECT_EQ(count_in_window(run.events, "memset"), 300u) << run.diagnostics;
    // Said so, in the notes and in the summary's probe points.
    for (const char* name : {"memcpy", "strlen", "memset"}) {
      EXPECT_TRUE(std::regex_search(run.diagnostics, std::regex(fmt::format("{} is an IFUNC: probing the implementation "
                                                                            "the dynamic linker chose, {} -> 0x[0-9a-f]+",
                                                                            name, name))))
          << run.diagnostics;
      EXPECT_TRUE(std::regex_search(run.diagnostics,
                                    std::regex(fmt::format("s/{} +[0-9]+ +0  {}:{} -> 0x[0-9a-f]+", name, libc, name))))
          << run.diagnostics;
    }
  }
  // BINARY:0xOFFSET keeps the kernel's literal meaning: at memcpy's symbol that is the
  // resolver, which runs while the dynamic linker relocates and never in the window.
  const uint64_t resolver = file_offset_of(libc, "memcpy");
  ASSERT_NE(resolver, 0u);
  const TracedRun literal = run_xprobe({"-e", "p:s/open window_open", "-e", "p:s/close window_close", "-e",
                                        fmt::format("p:s/resolver {}:{:#x}", libc, resolver)},
                                       program);
  EXPECT_EQ(literal.xprobe_status, 0) << literal.diagnostics;
  EXPECT_EQ(count_in_window(literal.events, "resolver"), 0u);
  EXPECT_EQ(literal.diagnostics.find("IFUNC"), std::string::npos) << literal.diagnostics;
}

// A glob with an explicit name is one event with a probe point per function (the kernel's
// multi-probe event): the summary has a row per point naming its function.
TEST(SymbolsAsMeant, ANamedGlobHasASummaryRowPerFunction) {
  const std::vector<std::string> program = {STRING_CALLS_PATH, "100", "70", "30"};
  const TracedRun run = run_xprobe({"--summary", "-e", "p:l/mem libc.so.6:mem[cs]*"}, program);
  EXPECT_EQ(run.xprobe_status, 0) << run.diagnostics;
  std::map<std::string, uint64_t> recorded;  // probe point -> RECORDED
  const std::regex row(R"(^l/mem +(\d+) +(\d+)  \S+:(\S+).*$)");
  std::istringstream lines(run.diagnostics);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) recorded[m[3]] += std::stoull(m[1]);
  }
  // memcpy and memset are among the rows, each its own, and the program's calls are there.
  ASSERT_TRUE(recorded.count("memcpy")) << run.diagnostics;
  ASSERT_TRUE(recorded.count("memset")) << run.diagnostics;
  EXPECT_GE(recorded["memcpy"], 100u) << run.diagnostics;
  EXPECT_GE(recorded["memset"], 30u) << run.diagnostics;
  EXPECT_GT(recorded.size(), 2u) << run.diagnostics;
  for (const TraceEvent& event : run.events) EXPECT_EQ(event.event, "mem");
  // The summary says what its columns count.
  EXPECT_NE(run.diagnostics.find("RECORDED: hits whose event was written; MISSED: hits whose event was lost"),
            std::string::npos);
}

// dash is stripped: no symbol covers its main. Its .eh_frame FDE delimits it, so a file-offset
// probe there goes in (and says what proved the boundary); the kernel's uprobe at the same
// offset is the oracle for the hit and its argument. .init has no FDE: still refused.
TEST(SymbolsAsMeant, StrippedCodeIsDelimitedByItsEhFrame) {
  const std::string dash = "/usr/bin/dash";
  if (run_text("nm " + dash + " 2>&1").find("no symbols") == std::string::npos) GTEST_SKIP() << dash << " has symbols";
  // main: what _start hands __libc_start_main in %rdi (objdump's comment names the address).
  const std::string start = run_text(fmt::format("objdump -d --start-address=0x$(readelf -h {} | awk '/Entry/ {{print "
                                                 "substr($4,3)}}') {} | head -20",
                                                 dash, dash));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(start, m, std::regex(R"(lea +-?0x[0-9a-f]+\(%rip\),%rdi +# ([0-9a-f]+))"))) << start;
  const uint64_t main_address = std::stoull(m[1], nullptr, 16);
  // dash's executable segment maps file offset = address (checked by readelf's LOAD lines).
  const std::string loads = run_text("readelf -lW " + dash + " | grep LOAD");
  ASSERT_NE(loads.find("0x004000 0x0000000000004000"), std::string::npos) << loads;
  const std::string place = fmt::format("{}:{:#x}", dash, main_address);
  const std::vector<std::string> program = {dash, "-c", "exit 3", "a", "b"};
  const TracedRun run = run_xprobe({"--summary", "-e", fmt::format("p:d/main {} argc=%di:s32", place)}, program);
  EXPECT_EQ(run.xprobe_status, 3) << run.diagnostics;
  const auto events = events_named(run.events, "main");
  ASSERT_EQ(events.size(), 1u) << run.diagnostics;
  EXPECT_NE(run.diagnostics.find("(in the .eh_frame FDE 0x"), std::string::npos) << run.diagnostics;
  const KernelRun kernel = run_under_kernel_uprobes({fmt::format("p:xpt_oracle/main {} argc=%di:s32", place)}, program);
  if (kernel.skip_reason.empty()) {
    ASSERT_EQ(kernel.events.size(), 1u);
    EXPECT_EQ(events[0].arg("argc"), kernel.events[0].arg("argc"));
  }
  EXPECT_EQ(events[0].arg("argc"), "5");
  // Inside main's first instruction of more than one byte (objdump's listing): refused by the
  // walk from the FDE's start.
  const std::string listing =
      run_text(fmt::format("objdump -d --start-address={:#x} --stop-address={:#x} {}", main_address, main_address + 32, dash));
  ASSERT_TRUE(std::regex_search(listing, m, std::regex(R"(\n +([0-9a-f]+):\t[0-9a-f]{2} [0-9a-f]{2})"))) << listing;
  const uint64_t inside_instruction = std::stoull(m[1], nullptr, 16) + 1;
  const TracedRun inside = run_xprobe({"-e", fmt::format("p:d/x {}:{:#x}", dash, inside_instruction)}, program);
  EXPECT_NE(inside.xprobe_status, 0);
  EXPECT_NE(inside.diagnostics.find("instruction boundary"), std::string::npos) << inside.diagnostics;
  // .init (0x4000) has no FDE and no symbol: nothing delimits it.
  const TracedRun init = run_xprobe({"-e", fmt::format("p:d/init {}:0x4000", dash)}, program);
  EXPECT_NE(init.xprobe_status, 0);
  EXPECT_NE(init.diagnostics.find("no function symbol or .eh_frame FDE"), std::string::npos) << init.diagnostics;
}

}  // namespace
}  // namespace xprobe::testing
