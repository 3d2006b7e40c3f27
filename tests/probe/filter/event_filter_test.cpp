// The kernel's event filter grammar: what it accepts and refuses (with its message and caret,
// from this machine's kernel: recorded in kernel_filter_readbacks.inc, and asked again live
// when the test runs as root), and what a filter lets through.
#include "probe/filter/event_filter.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernel_tracefs.h"
#include "probe/filter/trailing_filter.h"

namespace xprobe::probe::filter {
namespace {

struct KernelReadback {
  const char* filter;
  bool accepted;
  const char* file_text;
};

constexpr KernelReadback kKernelReadbacks[] = {
#include "kernel_filter_readbacks.inc"
};

FetchType type_named(const char* name) { return *fetch_type_named(name, 8); }

FetchType array_of(const char* name, uint16_t count) {
  FetchType type = type_named(name);
  type.array_count = count;
  return type;
}

// The event of the recorded readbacks: a=%di:u32 b=%si:s64 x=%dx:x16 s=+0(%di):string
// arr=+0(%si):u8[2] bf=%di:b3@2/32.
std::vector<FilterField> recorded_event_fields() {
  FetchType bitfield;
  bitfield.kind = TypeKind::Bitfield;
  bitfield.size = 4;
  bitfield.bit_width = 3;
  bitfield.bit_offset = 2;
  const std::vector<std::string> names{"a", "b", "x", "s", "arr", "bf"};
  const std::vector<FetchType> types{type_named("u32"), type_named("s64"), type_named("x16"),
                                     type_named("string"), array_of("u8", 2), bitfield};
  return event_fields(names, types, false);
}

// What the kernel's filter file would show after writing `filter`: the filter itself once
// accepted, the error block when refused.
std::string our_readback(const std::string& filter) {
  FilterResult result = parse_event_filter(filter, recorded_event_fields());
  if (clears_filter(filter)) return "none\n";
  if (!result) return result.error().filter_file_text();
  return result.value().text() + "\n";
}

TEST(EventFilterGrammar, AcceptsAndRefusesAsTheKernelDidWithItsMessagesAndCarets) {
  for (const KernelReadback& kernel : kKernelReadbacks) {
    const std::string filter = kernel.filter;
    const bool accepted = clears_filter(filter) || parse_event_filter(filter, recorded_event_fields()).ok();
    EXPECT_EQ(accepted, kernel.accepted) << filter;
    EXPECT_EQ(our_readback(filter), kernel.file_text) << filter;
  }
}

// The same filters written to the running kernel now, in an instance of our own.
TEST(EventFilterGrammar, LiveKernelShowsTheSameFilterFile) {
  std::string why_not;
  auto tracefs = testing::KernelTracefs::open(&why_not);
  if (!tracefs) GTEST_SKIP() << why_not;
  // Any instruction of a binary will do for a probe that never fires: the first bytes of
  // /bin/true's file are its ELF header, mapped but never run.
  const std::string definition =
      "p:xpt_filter/grammar /bin/true:0x0 a=%di:u32 b=%si:s64 x=%dx:x16 s=+0(%di):string arr=+0(%si):u8[2] "
      "bf=%di:b3@2/32";
  tracefs->undefine("xpt_filter/grammar");
  ASSERT_TRUE(tracefs->define(definition)) << tracefs->error_log();
  for (const KernelReadback& kernel : kKernelReadbacks) {
    const std::string filter = kernel.filter;
    std::string readback;
    const bool accepted = tracefs->set_filter("xpt_filter/grammar", filter, &readback);
    EXPECT_EQ(clears_filter(filter) || parse_event_filter(filter, recorded_event_fields()).ok(), accepted) << filter;
    EXPECT_EQ(our_readback(filter), readback) << filter;
  }
}

struct Hit {
  uint32_t a = 0;
  int64_t b = 0;
  std::optional<std::string> s = "";
  std::string comm = "prog";
  int64_t tid = 100;
  uint32_t cpu = 0;
};

FetchedValue number(const char* type, uint64_t value) {
  FetchedValue v;
  v.type = type_named(type);
  v.numbers = {value};
  return v;
}

bool passes(const std::string& text, const Hit& hit) {
  const std::vector<std::string> names{"a", "b", "s"};
  const std::vector<FetchType> types{type_named("u32"), type_named("s64"), type_named("string")};
  FilterResult result = parse_event_filter(text, event_fields(names, types, false));
  EXPECT_TRUE(result.ok()) << text << "\n" << (result.ok() ? "" : result.error().render());
  if (!result.ok()) return false;
  FetchedValue s;
  s.type = type_named("string");
  s.strings = {hit.s};
  const std::vector<FetchedValue> values{number("u32", hit.a), number("s64", static_cast<uint64_t>(hit.b)), s};
  FilterInputs inputs;
  inputs.values = values;
  inputs.comm = hit.comm;
  inputs.tid = hit.tid;
  inputs.cpu = hit.cpu;
  inputs.probe_address = 0x401000;
  return result.value().matches(inputs);
}

TEST(EventFilterEvaluation, NumbersCompareAtTheFieldsSizeAndSignedness) {
  EXPECT_TRUE(passes("a == 5", {.a = 5}));
  EXPECT_FALSE(passes("a == 5", {.a = 6}));
  EXPECT_TRUE(passes("a != 5", {.a = 6}));
  // A u32 field sees the number cut to 32 bits: 2^32 + 1 is 1.
  EXPECT_TRUE(passes("a == 4294967297", {.a = 1}));
  EXPECT_TRUE(passes("a > 4000000000", {.a = 4000000001u}));
  EXPECT_TRUE(passes("b < 0", {.b = -3}));
  EXPECT_FALSE(passes("b > 0", {.b = -3}));
  EXPECT_TRUE(passes("b >= -3 && b <= -3", {.b = -3}));
  EXPECT_TRUE(passes("b == -0x10", {.b = -16}));
  EXPECT_TRUE(passes("a == 010", {.a = 8}));
  EXPECT_TRUE(passes("a & 6", {.a = 2}));
  EXPECT_FALSE(passes("a & 6", {.a = 9}));
  EXPECT_TRUE(passes("common_pid == 100 && cpu == 3", {.tid = 100, .cpu = 3}));
  EXPECT_TRUE(passes("__probe_ip == 0x401000", {}));
  EXPECT_TRUE(passes("common_flags == 0 && common_preempt_count == 0", {}));
}

TEST(EventFilterEvaluation, StringsMatchWholeOrByTheKernelsGlobForms) {
  EXPECT_TRUE(passes("s == \"abc\"", {.s = "abc"}));
  EXPECT_FALSE(passes("s == \"abc\"", {.s = "abcd"}));
  EXPECT_TRUE(passes("s != \"abc\"", {.s = "abcd"}));
  EXPECT_TRUE(passes("s ~ \"ab*\"", {.s = "abcd"}));
  EXPECT_FALSE(passes("s ~ \"ab*\"", {.s = "xabcd"}));
  EXPECT_TRUE(passes("s ~ \"*cd\"", {.s = "xabcd"}));
  EXPECT_FALSE(passes("s ~ \"*cd\"", {.s = "xabcdx"}));
  EXPECT_TRUE(passes("s ~ \"*bc*\"", {.s = "xabcdx"}));
  EXPECT_TRUE(passes("s ~ \"a*d\"", {.s = "abcd"}));
  EXPECT_TRUE(passes("s ~ \"a?c[a-e]\"", {.s = "abcd"}));
  EXPECT_FALSE(passes("s ~ \"a?c[!a-e]\"", {.s = "abcd"}));
  EXPECT_TRUE(passes("s ~ \"!ab*\"", {.s = "xyz"}));
  EXPECT_FALSE(passes("s ~ \"!ab*\"", {.s = "abz"}));
  EXPECT_TRUE(passes("s ~ \"abc\"", {.s = "abc"}));
  EXPECT_TRUE(passes("s ~ 'a\\*c'", {.s = "a*c"}));
  EXPECT_FALSE(passes("s ~ 'a\\*c'", {.s = "abc"}));
  EXPECT_TRUE(passes("comm ~ \"pr*\" && COMM == \"prog\"", {.comm = "prog"}));
  // A string that could not be read compares as empty.
  EXPECT_TRUE(passes("s == \"\"", {.s = std::nullopt}));
}

TEST(EventFilterEvaluation, AndBindsTighterThanOrAndNotAppliesToWhatFollows) {
  // a == 1 || (b == 2 && a == 3): with a = 1 and b != 2 it passes, as C reads it.
  EXPECT_TRUE(passes("a == 1 || b == 2 && a == 3", {.a = 1, .b = 0}));
  EXPECT_FALSE(passes("(a == 1 || b == 2) && a == 3", {.a = 1, .b = 0}));
  EXPECT_FALSE(passes("!a == 1", {.a = 1}));
  EXPECT_TRUE(passes("!a == 1 && b == 0", {.a = 2, .b = 0}));
  EXPECT_TRUE(passes("!(a == 1 && b == 0)", {.a = 1, .b = 1}));
  EXPECT_FALSE(passes("!(a == 1 || b == 0)", {.a = 2, .b = 0}));
  EXPECT_TRUE(passes("!!a == 1", {.a = 1}));
  EXPECT_TRUE(passes("((a == 1)) && (!(s ~ \"*z*\") || b < 0)", {.a = 1, .b = 5, .s = "abc"}));
}

TEST(EventFilterFields, ArgumentsHideTheGenericFieldsAndReturnProbesHaveTheirOwn) {
  const std::vector<std::string> names{"comm"};
  const std::vector<FetchType> types{type_named("u64")};
  // An argument named comm is a number: the generic comm is hidden, as in the kernel.
  EXPECT_TRUE(parse_event_filter("comm == 3", event_fields(names, types, false)).ok());
  EXPECT_FALSE(parse_event_filter("comm == \"x\"", event_fields(names, types, false)).ok());
  EXPECT_TRUE(parse_event_filter("__probe_func == 1 && __probe_ret_ip > 2", event_fields(names, types, true)).ok());
  EXPECT_FALSE(parse_event_filter("__probe_ip == 1", event_fields(names, types, true)).ok());
}

TEST(TrailingFilter, SplitsAtTheWordIfOutsideQuotes) {
  auto split = split_trailing_filter("p:g/e open path=+0(%di):string if path ~ \"/etc/*\"");
  EXPECT_EQ(split.definition, "p:g/e open path=+0(%di):string");
  EXPECT_EQ(split.filter, "path ~ \"/etc/*\"");
  split = split_trailing_filter("p:g/e diff a=\\\"x if y\\\" b=%di");
  EXPECT_EQ(split.filter, std::nullopt);
  split = split_trailing_filter("p:g/e iffy a=%di");
  EXPECT_EQ(split.filter, std::nullopt);
  split = split_trailing_filter("p:g/e f if");
  EXPECT_EQ(split.definition, "p:g/e f");
  EXPECT_EQ(split.filter, "");
}

}  // namespace
}  // namespace xprobe::probe::filter
