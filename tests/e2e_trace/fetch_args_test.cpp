// Every fetch-argument kind and type on a real program. Expected values come from what
// programs/fetchargs.c passes (written by hand from its source), never from xprobe's output.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "trace_runner.h"

namespace xprobe::testing {
namespace {

class FetchArgs : public ::testing::Test {
 protected:
  void expect_untouched(const TracedRun& run) {
    const RunResult untraced = run_untraced({FETCHARGS_PATH, "3"});
    EXPECT_EQ(run.program_output, untraced.output);
    EXPECT_EQ(run.xprobe_status, untraced.exit_status) << run.diagnostics;
  }
};

TEST_F(FetchArgs, IntegersRegistersStackAndArgN) {
  auto run = run_xprobe({"-e", "p:t/many many_args a=$arg1:s64 b=$arg2:s64 f=$arg6:s64 g=$arg7:s64 h=$arg8:x64 "
                               "s1=$stack1:s64 sp8=+8(%sp):s64 di=%di:s64 k=\\42:u32",
                         "-e", "p many_args"},
                        {FETCHARGS_PATH, "3"});
  expect_untouched(run);
  auto many = events_named(run.events, "many");
  ASSERT_EQ(many.size(), 3u) << run.trace_text << run.diagnostics;
  for (int i = 0; i < 3; ++i) {
    const TraceEvent& e = many[static_cast<size_t>(i)];
    EXPECT_EQ(e.arg("a"), std::to_string(i));
    EXPECT_EQ(e.arg("b"), "-2");
    EXPECT_EQ(e.arg("f"), "-6");
    EXPECT_EQ(e.arg("g"), std::to_string(70 + i));
    EXPECT_EQ(e.arg("h"), fmt::format("{:#x}", 0x7fffffff00L + i));
    EXPECT_EQ(e.arg("s1"), std::to_string(70 + i));  // $stack1: the 7th argument, above the return address
    EXPECT_EQ(e.arg("sp8"), std::to_string(70 + i));
    EXPECT_EQ(e.arg("di"), std::to_string(i));
    EXPECT_EQ(e.arg("k"), "42");
    EXPECT_EQ(e.comm, "fetchargs");
  }
  // The seed's form: no event name, named after the symbol, no arguments.
  EXPECT_EQ(events_named(run.events, "many_args").size(), 3u);
}

TEST_F(FetchArgs, StructFieldsBitfieldsArraysAndStrings) {
  auto run = run_xprobe({"-e", "p:t/rec take_record id=+0(%di):s32 flags=+4(%di):b3@0/32 mode=+4(%di):b5@3/32 "
                               "name=+8(%di):string label=+0(+24(%di)):string values=+32(%di):s64[4] v3=+56(%di):u64 "
                               "c=+8(%di):char"},
                        {FETCHARGS_PATH, "3"});
  expect_untouched(run);
  auto rec = events_named(run.events, "rec");
  ASSERT_EQ(rec.size(), 3u) << run.trace_text << run.diagnostics;
  for (int i = 0; i < 3; ++i) {
    const TraceEvent& e = rec[static_cast<size_t>(i)];
    EXPECT_EQ(e.arg("id"), std::to_string(100 + i));
    EXPECT_EQ(e.arg("flags"), std::to_string(i & 7));
    EXPECT_EQ(e.arg("mode"), "17");
    EXPECT_EQ(e.arg("name"), fmt::format("\"rec-{}\"", i));
    EXPECT_EQ(e.arg("label"), "\"label\"");
    EXPECT_EQ(e.arg("values"), fmt::format("{{{},{},{},{}}}", i * 10, i * 10 + 1, i * 10 + 2, i * 10 + 3));
    EXPECT_EQ(e.arg("v3"), std::to_string(i * 10 + 3));
    EXPECT_EQ(e.arg("c"), "'r'");
  }
}

TEST_F(FetchArgs, NarrowSignedTypesAndCharacters) {
  auto run = run_xprobe({"-e", "p:t/str take_string s=+0(%di):string small=%si:s8 medium=%dx:s16 first=+0(%di):u8 "
                               "xs=%si:x8"},
                        {FETCHARGS_PATH, "3"});
  expect_untouched(run);
  auto str = events_named(run.events, "str");
  ASSERT_EQ(str.size(), 3u) << run.trace_text << run.diagnostics;
  for (int i = 0; i < 3; ++i) {
    const TraceEvent& e = str[static_cast<size_t>(i)];
    EXPECT_EQ(e.arg("s"), i % 2 ? "\"odd string\"" : "\"even\"");
    EXPECT_EQ(e.arg("small"), std::to_string(-5 - i));
    EXPECT_EQ(e.arg("medium"), std::to_string(-300 * (i + 1)));
    EXPECT_EQ(e.arg("first"), std::to_string(i % 2 ? 'o' : 'e'));
    EXPECT_EQ(e.arg("xs"), fmt::format("{:#x}", static_cast<uint8_t>(-5 - i)));
  }
}

TEST_F(FetchArgs, BadPointersFaultWithoutHarm) {
  auto run = run_xprobe({"-e", "p:t/bad keep_pointer s=+0(%di):string n=+0(%di):u64 deep=+0(+0(%di)):u32"},
                        {FETCHARGS_PATH, "3"});
  expect_untouched(run);
  auto bad = events_named(run.events, "bad");
  ASSERT_EQ(bad.size(), 3u) << run.trace_text << run.diagnostics;
  for (const auto& e : bad) {
    EXPECT_EQ(e.arg("s"), "(fault)");
    EXPECT_EQ(e.arg("n"), "0");  // the kernel records a faulting number as 0
    EXPECT_EQ(e.arg("deep"), "0");
  }
}

TEST_F(FetchArgs, GlobalsCommAndSymbols) {
  auto run = run_xprobe({"-e", "p:t/glob keep_pointer counter=@counter_global:s64 greeting=+0(@greeting_global):string "
                               "who=$comm ret=+0(%sp):symbol"},
                        {FETCHARGS_PATH, "3"});
  expect_untouched(run);
  auto glob = events_named(run.events, "glob");
  ASSERT_EQ(glob.size(), 3u) << run.trace_text << run.diagnostics;
  const long expected_counter[] = {7, 7, 8};  // counter_global += i after each round
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(glob[i].arg("counter"), std::to_string(expected_counter[i]));
    EXPECT_EQ(glob[i].arg("greeting"), "\"hello-global\"");
    EXPECT_EQ(glob[i].arg("who"), "\"fetchargs\"");
    EXPECT_EQ(glob[i].arg("ret").rfind("main+0x", 0), 0u) << glob[i].arg("ret");  // returns into main
  }
}

TEST_F(FetchArgs, ReturnProbesUnderRecursion) {
  auto run = run_xprobe({"-e", "p:t/in recurse depth=$arg1:s64", "-e", "r:t/out recurse ret=$retval:s64 depth=$arg1:s64"},
                        {FETCHARGS_PATH, "3"});
  expect_untouched(run);
  auto in = events_named(run.events, "in");
  auto out = events_named(run.events, "out");
  ASSERT_EQ(in.size(), 15u) << run.trace_text << run.diagnostics;
  ASSERT_EQ(out.size(), 15u) << run.trace_text << run.diagnostics;
  // recurse(4) enters 4,3,2,1,0 and returns 0 (depth 0), 1, 3, 6, 10 (depth 4).
  const long entry_depths[] = {4, 3, 2, 1, 0};
  const long return_depths[] = {0, 1, 2, 3, 4};
  const long return_values[] = {0, 1, 3, 6, 10};
  for (size_t k = 0; k < 15; ++k) {
    EXPECT_EQ(in[k].arg("depth"), std::to_string(entry_depths[k % 5]));
    EXPECT_EQ(out[k].arg("depth"), std::to_string(return_depths[k % 5]));
    EXPECT_EQ(out[k].arg("ret"), std::to_string(return_values[k % 5]));
    EXPECT_NE(out[k].location.find(" <- "), std::string::npos) << out[k].location;
  }
  // Entries and returns interleave as calls do: every return comes after its entry.
  std::vector<std::string> order;
  for (const auto& e : run.events) order.push_back(e.event);
  for (size_t round = 0; round < 3; ++round)
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(order[round * 10 + k], "in");
      EXPECT_EQ(order[round * 10 + 5 + k], "out");
    }
}

}  // namespace
}  // namespace xprobe::testing
