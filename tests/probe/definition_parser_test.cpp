#include "probe/definition_parser.h"
#include "probe/fetcharg_parser.h"

#include <gtest/gtest.h>

namespace xprobe::probe {
namespace {

ProbeDefinition parse_ok(std::string_view text, insn::Arch arch = insn::Arch::X86_64) {
  auto parsed = parse_definition(text, ParseOptions{arch});
  EXPECT_TRUE(parsed.ok()) << text << "\n" << (parsed.ok() ? "" : parsed.error().render());
  if (!parsed.ok()) return {};
  return std::move(parsed).value();
}

// Columns are counted by hand on the single-spaced command; the ones marked "kernel" were
// also read off this machine's tracefs error_log for the same text.
void expect_error(std::string_view text, std::string_view message, size_t column) {
  auto parsed = parse_definition(text);
  ASSERT_FALSE(parsed.ok()) << text;
  EXPECT_EQ(parsed.error().message, message) << text;
  EXPECT_EQ(parsed.error().column, column) << text << "\n" << parsed.error().render();
}

const ProbeArgument& only_argument(const ProbeDefinition& definition) {
  EXPECT_EQ(definition.arguments.size(), 1u);
  return definition.arguments.at(0);
}

// ---- heads, events and groups -------------------------------------------------------------

TEST(ParseHead, EntryProbeWithFileOffsetAndDefaultName) {
  const auto d = parse_ok("p /bin/bash:0x4245c0");
  EXPECT_EQ(d.kind, ProbeKind::Entry);
  EXPECT_EQ(d.group, "uprobes");
  EXPECT_EQ(d.event, "p_bash_0x4245c0");  // the name uprobetracer.rst shows
  EXPECT_FALSE(d.event_given);
  EXPECT_EQ(d.place.kind, ProbePlace::Kind::FileOffset);
  EXPECT_EQ(d.place.binary, "/bin/bash");
  EXPECT_EQ(d.place.address, 0x4245c0u);
}

TEST(ParseHead, ReturnProbeKeepsTheUprobeStyleName) {
  const auto d = parse_ok("r /bin/bash:0x4245c0");
  EXPECT_EQ(d.kind, ProbeKind::Return);
  EXPECT_EQ(d.event, "p_bash_0x4245c0");  // the kernel uses 'p_' for uretprobes too
}

TEST(ParseHead, GeneratedNameCutsTheBasenameAtDotDashOrUnderscore) {
  EXPECT_EQ(parse_ok("p /tmp/my-lib_x.so.1:0x1149").event, "p_my_0x1149");  // kernel
  EXPECT_EQ(parse_ok("p /lib/libc.so.6:0x10").event, "p_libc_0x10");
}

TEST(ParseHead, ExplicitGroupAndEvent) {
  const auto d = parse_ok("p:grp/ev /bin/true:0x10");
  EXPECT_EQ(d.group, "grp");
  EXPECT_EQ(d.event, "ev");
  EXPECT_TRUE(d.event_given);
  const auto dotted = parse_ok("p:g.e /bin/true:0x10");
  EXPECT_EQ(dotted.group, "g");
  EXPECT_EQ(dotted.event, "e");
}

TEST(ParseHead, GroupOnlyKeepsGeneratedEvent) {
  const auto d = parse_ok("p:grp/ /bin/true:0x10");
  EXPECT_EQ(d.group, "grp");
  EXPECT_EQ(d.event, "p_true_0x10");
}

TEST(ParseHead, Maxactive) {
  const auto d = parse_ok("r16:ret /bin/true:0x10");
  EXPECT_EQ(d.kind, ProbeKind::Return);
  ASSERT_TRUE(d.maxactive.has_value());
  EXPECT_EQ(*d.maxactive, 16u);
  EXPECT_EQ(d.event, "ret");
  EXPECT_EQ(*parse_ok("r4096 foo").maxactive, 4096u);
  EXPECT_FALSE(parse_ok("r foo").maxactive.has_value());
}

// The kernel's uprobe parser ignores whatever stands between the type and the ':' (checked
// against the running kernel in KernelConformance.LimitsHeadsAndPlacesAsTheRunningKernel);
// a number after 'r' up to 4096 still bounds the return frames.
TEST(ParseHead, TextBetweenTypeAndColonIsIgnored) {
  EXPECT_EQ(parse_ok("p2 /bin/true:0x10").kind, ProbeKind::Entry);
  EXPECT_FALSE(parse_ok("p2 /bin/true:0x10").maxactive.has_value());
  EXPECT_EQ(parse_ok("pfoo:e /bin/true:0x10").event, "e");
  EXPECT_FALSE(parse_ok("rx /bin/true:0x10").maxactive.has_value());
  EXPECT_FALSE(parse_ok("r4097 /bin/true:0x10").maxactive.has_value());
  EXPECT_EQ(parse_ok("r2x:e /bin/true:0x10").kind, ProbeKind::Return);
  EXPECT_EQ(parse_ok("r2x:e /bin/true:0x10").event, "e");
}

TEST(ParseHead, Delete) {
  const auto d = parse_ok("-:grp/ev");
  EXPECT_EQ(d.kind, ProbeKind::Delete);
  EXPECT_EQ(d.group, "grp");
  EXPECT_EQ(d.event, "ev");
  EXPECT_EQ(parse_ok("-:p_bash_0x4245c0").group, "uprobes");
  EXPECT_FALSE(parse_ok("-:p_bash_0x4245c0").group_given);
  // Every event of a group, and one probe point of an event.
  EXPECT_EQ(parse_ok("-:grp/").event, "");
  const auto point = parse_ok("-:grp/ev /bin/true:0x0000000000000010 x=%ax");
  EXPECT_EQ(point.delete_match, (std::vector<std::string>{"/bin/true:0x0000000000000010", "x=%ax"}));
}

TEST(ParseHead, WordsAreJoinedBySingleSpaces) {
  const auto d = parse_ok("  p:e\t /bin/true:0x10    %ax  ");
  EXPECT_EQ(d.command, "p:e /bin/true:0x10 %ax");
}

TEST(ParseHeadErrors, KernelMessagesAndCarets) {
  expect_error("p:/ev /bin/true:0x10", "Group name is not specified", 2);                              // kernel
  expect_error("p:1g/e /bin/true:0x10", "Group name must follow the same rules as C identifiers", 2);  // kernel
  expect_error("p:g/1e /bin/true:0x10", "Event name must follow the same rules as C identifiers", 4);  // kernel
  expect_error("p:a-b /bin/true:0x10", "Event name must follow the same rules as C identifiers", 2);   // kernel
  expect_error("p: /bin/true:0x10", "Event name is not specified", 2);                                // kernel
  expect_error("p:a/b/c /bin/true:0x10", "Event name must follow the same rules as C identifiers", 4);  // kernel
  const std::string long_event(64, 'a');
  expect_error("p:" + long_event + " /bin/true:0x10", "Event name is too long", 2);   // kernel
  expect_error("p:" + std::string(63, 'a'), "Probe point is not specified", 2 + 63 + 1);
  expect_error("p:" + long_event + "/e /bin/true:0x10", "Group name is too long", 2);  // kernel
  expect_error("-:", "Event name is not specified", 2);
  expect_error("-", "Event name is not specified", 1);
}

TEST(ParseHeadErrors, ProbeTypesAndMaxactive) {
  expect_error("", "Empty probe definition", 0);
  expect_error("   ", "Empty probe definition", 0);
  expect_error("x /bin/true:0x10", "Unknown probe type: a definition starts with p, r or -", 0);
  expect_error("e foo", "Unknown probe type: a definition starts with p, r or -", 0);
  expect_error("p", "Probe point is not specified", 2);
  expect_error("p:ev", "Probe point is not specified", 5);
}

// ---- places ---------------------------------------------------------------------------------

TEST(ParsePlace, SymbolInMainExecutableNamedAfterIt) {
  const auto d = parse_ok("p do_sys_open a1 a2");
  EXPECT_EQ(d.place.kind, ProbePlace::Kind::Symbol);
  EXPECT_EQ(d.place.binary, "");
  EXPECT_EQ(d.place.symbol, "do_sys_open");
  EXPECT_EQ(d.place.offset, 0);
  EXPECT_EQ(d.event, "do_sys_open");
}

TEST(ParsePlace, SymbolWithOffsetsAndReturn) {
  const auto plus = parse_ok("p libc.so.6:malloc+0x10");
  EXPECT_EQ(plus.place.binary, "libc.so.6");
  EXPECT_EQ(plus.place.symbol, "malloc");
  EXPECT_EQ(plus.place.offset, 16);
  EXPECT_EQ(plus.event, "malloc_16");
  const auto minus = parse_ok("p foo-8");
  EXPECT_EQ(minus.place.offset, -8);
  EXPECT_EQ(minus.event, "foo__8");
  const auto ret = parse_ok("p /bin/x:foo%return");
  EXPECT_EQ(ret.kind, ProbeKind::Return);
  EXPECT_EQ(ret.place.symbol, "foo");
  EXPECT_EQ(ret.event, "foo__return");
  EXPECT_EQ(parse_ok("r foo+0").event, "foo__return");
}

TEST(ParsePlace, FileOffsetReturnAndRefCounter) {
  const auto ret = parse_ok("p /bin/true:0x1149%return");
  EXPECT_EQ(ret.kind, ProbeKind::Return);
  EXPECT_EQ(ret.place.kind, ProbePlace::Kind::FileOffset);
  EXPECT_EQ(ret.place.address, 0x1149u);
  const auto decimal = parse_ok("p /bin/true:4425");
  EXPECT_EQ(decimal.place.address, 4425u);
  EXPECT_EQ(decimal.event, "p_true_0x1149");  // kernel
  const auto ref = parse_ok("p /bin/true:0x1149(0x10)");
  ASSERT_TRUE(ref.place.ref_ctr_offset.has_value());
  EXPECT_EQ(*ref.place.ref_ctr_offset, 0x10u);
  EXPECT_EQ(ref.place.address, 0x1149u);
}

TEST(ParsePlace, VirtualAddress) {
  const auto d = parse_ok("p 0x401000 %ax");
  EXPECT_EQ(d.place.kind, ProbePlace::Kind::VirtualAddress);
  EXPECT_EQ(d.place.address, 0x401000u);
  EXPECT_EQ(d.event, "p_0x401000");
  EXPECT_EQ(parse_ok("r 0x401000").event, "r_0x401000");
}

TEST(ParsePlace, GlobsAreRecordedNotNamed) {
  const auto d = parse_ok("p libc.so.6:str*");
  EXPECT_TRUE(d.place.is_glob);
  EXPECT_EQ(d.place.symbol, "str*");
  EXPECT_EQ(d.event, "");
  EXPECT_EQ(derive_event_name(d.place, d.kind, "strlen"), "strlen");
  EXPECT_TRUE(parse_ok("p foo?").place.is_glob);
  EXPECT_TRUE(parse_ok("p foo[ab]").place.is_glob);
  EXPECT_EQ(parse_ok("p:named libc.so.6:str*").event, "named");
}

TEST(ParsePlace, CxxNamesKeepTheirDoubleColons) {
  const auto bare = parse_ok("p ns::Widget::draw");
  EXPECT_EQ(bare.place.binary, "");
  EXPECT_EQ(bare.place.symbol, "ns::Widget::draw");
  EXPECT_EQ(bare.event, "ns__Widget__draw");
  const auto in_lib = parse_ok("p libw.so:ns::draw+4");
  EXPECT_EQ(in_lib.place.binary, "libw.so");
  EXPECT_EQ(in_lib.place.symbol, "ns::draw");
  EXPECT_EQ(in_lib.place.offset, 4);
}

TEST(ParsePlaceErrors, KernelMessagesAndCarets) {
  expect_error("p /tmp/xp/t:0x1149x", "Invalid uprobe offset", 12);                   // kernel
  expect_error("p /tmp/xp/t:0x1149+4", "Invalid uprobe offset", 12);                  // kernel
  expect_error("p /tmp/xp/t:0x1149%foo", "Invalid probed address suffix", 18);        // kernel
  expect_error("p /tmp/xp/t:0x1149(0x10", "Reference counter brace is not closed", 23);   // kernel
  expect_error("p /tmp/xp/t:0x1149(0x10)x", "Reference counter has wrong suffix", 24);    // kernel
  expect_error("p /tmp/xp/t:0x1149(zz)", "Invalid reference counter offset", 19);
  expect_error("p /tmp/xp/t:", "Invalid uprobe offset", 12);
  expect_error("p :0x10", "Failed to find the given file", 2);
  expect_error("p 0x10zz", "Invalid probed address or symbol", 2);
  expect_error("p foo+bar", "Invalid probed address or symbol", 2);
  expect_error("p hoge-fuga", "Invalid probed address or symbol", 2);
  expect_error("p hoge+1000-1000", "Invalid probed address or symbol", 2);
  expect_error("p lib.so:foo+", "Invalid probed address or symbol", 9);
  expect_error("p +4", "Invalid probed address or symbol", 2);
  expect_error("r foo+4", "Retprobe address must be an function entry", 2);
  expect_error("p foo+4%return", "Retprobe address must be an function entry", 2);
  expect_error("p %return", "Invalid probed address or symbol", 2);
}

// ---- fetch arguments ----------------------------------------------------------------------

TEST(ParseArguments, DefaultNamesAndTypes) {
  const auto d = parse_ok("p:xx /bin/true:0x10 %ax x=%bx %cx");
  ASSERT_EQ(d.arguments.size(), 3u);
  EXPECT_EQ(d.arguments[0].name, "arg1");
  EXPECT_FALSE(d.arguments[0].name_given);
  EXPECT_EQ(d.arguments[1].name, "x");
  EXPECT_TRUE(d.arguments[1].name_given);
  EXPECT_EQ(d.arguments[2].name, "arg3");  // position-based, as the kernel names them
  EXPECT_EQ(d.arguments[0].type.name(), "x64");
  EXPECT_EQ(d.arguments[1].column, 24u);
  EXPECT_EQ(parse_ok("p foo %ax", insn::Arch::I386).arguments[0].type.name(), "x32");
}

TEST(ParseArguments, EveryX86_64Register) {
  for (const char* name : {"ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "r8", "r9", "r10", "r11", "r12", "r13",
                           "r14", "r15", "ip", "flags", "cs", "ss", "ds", "es", "fs", "gs", "orig_ax"}) {
    const auto d = parse_ok(std::string("p foo %") + name);
    const auto& source = only_argument(d).expression.source;
    EXPECT_EQ(source.kind, FetchSource::Kind::Register);
    EXPECT_EQ(source.text, name);
    EXPECT_EQ(register_name(probe_abi(insn::Arch::X86_64), source.reg), name);
  }
  // user_regs_struct positions, counted by hand from sys/user.h.
  EXPECT_EQ(only_argument(parse_ok("p foo %di")).expression.source.reg, 14);
  EXPECT_EQ(only_argument(parse_ok("p foo %ip")).expression.source.reg, 16);
  EXPECT_EQ(only_argument(parse_ok("p foo %flags")).expression.source.reg, 18);
}

TEST(ParseArguments, OtherArchitectures) {
  const auto arm = parse_ok("p foo %x0 %x30 %sp %pc %pstate", insn::Arch::AArch64);
  ASSERT_EQ(arm.arguments.size(), 5u);
  EXPECT_EQ(arm.arguments[0].expression.source.reg, 0);
  EXPECT_EQ(arm.arguments[1].expression.source.reg, 30);
  EXPECT_EQ(arm.arguments[2].expression.source.reg, 31);
  EXPECT_EQ(arm.arguments[3].expression.source.reg, 32);
  EXPECT_FALSE(parse_definition("p foo %ax", ParseOptions{insn::Arch::AArch64}).ok());
  EXPECT_FALSE(parse_definition("p foo %r8", ParseOptions{insn::Arch::I386}).ok());
  EXPECT_EQ(parse_ok("p foo %ax", insn::Arch::I386).arguments[0].expression.source.reg, 6);
}

TEST(ParseArguments, Variables) {
  const auto d = parse_ok("r foo $retval $stack $stack3 $comm $arg2");
  ASSERT_EQ(d.arguments.size(), 5u);
  EXPECT_EQ(d.arguments[0].expression.source.kind, FetchSource::Kind::ReturnValue);
  EXPECT_EQ(d.arguments[1].expression.source.kind, FetchSource::Kind::StackPointer);
  EXPECT_EQ(d.arguments[2].expression.source.kind, FetchSource::Kind::StackEntry);
  EXPECT_EQ(d.arguments[2].expression.source.value, 3u);
  EXPECT_EQ(d.arguments[3].expression.source.kind, FetchSource::Kind::Comm);
  EXPECT_EQ(d.arguments[3].type.kind, TypeKind::String);  // $comm defaults to string
  EXPECT_EQ(d.arguments[4].expression.source.kind, FetchSource::Kind::Argument);
  EXPECT_EQ(d.arguments[4].expression.source.value, 2u);
}

TEST(ParseArguments, SeedAliases) {
  const auto d = parse_ok("r do_sys_open rv rp a1 s2 r3");
  ASSERT_EQ(d.arguments.size(), 5u);
  EXPECT_EQ(d.arguments[0].expression.source.kind, FetchSource::Kind::ReturnValue);
  EXPECT_EQ(d.arguments[1].expression.source.kind, FetchSource::Kind::ReturnAddress);
  EXPECT_EQ(d.arguments[2].expression.source.kind, FetchSource::Kind::Argument);
  EXPECT_EQ(d.arguments[2].expression.source.value, 1u);
  EXPECT_EQ(d.arguments[3].expression.source.kind, FetchSource::Kind::StackEntry);
  EXPECT_EQ(d.arguments[3].expression.source.value, 2u);
  EXPECT_EQ(d.arguments[4].expression.source.kind, FetchSource::Kind::Register);
  EXPECT_EQ(d.arguments[4].expression.source.text, "r12");  // r15 r14 r13 r12 ...: index 3
  EXPECT_EQ(only_argument(parse_ok("p foo r0")).expression.source.text, "r15");
  EXPECT_EQ(only_argument(parse_ok("p foo r26")).expression.source.text, "gs");
  EXPECT_EQ(only_argument(parse_ok("p foo r8")).expression.source.text, "r9");  // not %r8
  EXPECT_EQ(only_argument(parse_ok("p foo r6", insn::Arch::I386)).expression.source.text, "ax");
  EXPECT_EQ(only_argument(parse_ok("p foo r31", insn::Arch::AArch64)).expression.source.text, "sp");
}

TEST(ParseArguments, MemoryForms) {
  const auto addr = only_argument(parse_ok("p foo @0x601040"));
  EXPECT_EQ(addr.expression.source.kind, FetchSource::Kind::Immediate);
  EXPECT_EQ(addr.expression.source.value, 0x601040u);
  ASSERT_EQ(addr.expression.derefs.size(), 1u);
  EXPECT_EQ(addr.expression.derefs[0].offset, 0);

  const auto sym = only_argument(parse_ok("p foo @counter+8:s32"));
  EXPECT_EQ(sym.expression.source.kind, FetchSource::Kind::SymbolAddress);
  EXPECT_EQ(sym.expression.source.text, "counter");
  EXPECT_EQ(sym.expression.source.offset, 8);
  EXPECT_EQ(sym.expression.derefs.size(), 1u);
  EXPECT_EQ(only_argument(parse_ok("p foo @counter-0x10")).expression.source.offset, -16);

  const auto file = only_argument(parse_ok("p /bin/x:0x10 @+0x2000"));
  EXPECT_EQ(file.expression.source.kind, FetchSource::Kind::FileOffsetAddress);
  EXPECT_EQ(file.expression.source.value, 0x2000u);
}

TEST(ParseArguments, NestedDereferences) {
  const auto a = only_argument(parse_ok("p foo +8(-16(+u4(%di))):u32"));
  EXPECT_EQ(a.expression.source.kind, FetchSource::Kind::Register);
  ASSERT_EQ(a.expression.derefs.size(), 3u);
  EXPECT_EQ(a.expression.derefs[0].offset, 4);  // innermost first
  EXPECT_TRUE(a.expression.derefs[0].user);
  EXPECT_EQ(a.expression.derefs[1].offset, -16);
  EXPECT_EQ(a.expression.derefs[2].offset, 8);
  EXPECT_EQ(a.type.name(), "u32");

  // The kernel's deepest: 14 memory reads, @ADDR's own counted.
  std::string deep = "%sp";
  for (unsigned i = 0; i < kMaxDereferenceDepth; ++i) deep = "+0(" + deep + ")";
  EXPECT_EQ(only_argument(parse_ok("p foo " + deep)).expression.derefs.size(), 14u);
}

TEST(ParseArguments, Immediates) {
  EXPECT_EQ(only_argument(parse_ok("p foo \\123")).expression.source.value, 123u);
  EXPECT_EQ(only_argument(parse_ok("p foo \\0x10")).expression.source.value, 16u);
  EXPECT_EQ(only_argument(parse_ok("p foo \\-1")).expression.source.value, ~uint64_t{0});
  EXPECT_EQ(only_argument(parse_ok("p foo \\+7")).expression.source.value, 7u);
  const auto text = only_argument(parse_ok("p foo s=\\\"hello\""));
  EXPECT_EQ(text.expression.source.kind, FetchSource::Kind::ImmediateString);
  EXPECT_EQ(text.expression.source.text, "hello");
  EXPECT_EQ(text.type.kind, TypeKind::String);
}

TEST(ParseArguments, Types) {
  struct Case {
    const char* text;
    const char* name;
    TypeKind kind;
    unsigned size;
  };
  const Case cases[] = {
      {"+0(%di):u8", "u8", TypeKind::Unsigned, 1},     {"+0(%di):u16", "u16", TypeKind::Unsigned, 2},
      {"+0(%di):u32", "u32", TypeKind::Unsigned, 4},   {"+0(%di):u64", "u64", TypeKind::Unsigned, 8},
      {"+0(%di):s8", "s8", TypeKind::Signed, 1},       {"+0(%di):s64", "s64", TypeKind::Signed, 8},
      {"+0(%di):x16", "x16", TypeKind::Hex, 2},        {"%di:x32", "x32", TypeKind::Hex, 4},
      {"+0(%di):char", "char", TypeKind::Char, 1},     {"+0(%di):string", "string", TypeKind::String, 8},
      {"+0(%di):ustring", "ustring", TypeKind::UString, 8}, {"%ip:symbol", "symbol", TypeKind::Symbol, 8},
      {"+0(%di):b3@5/32", "b3@5/32", TypeKind::Bitfield, 4},
      {"%di:b4@28/32", "b4@28/32", TypeKind::Bitfield, 4}, {"+0(%di):x16[4]", "x16[4]", TypeKind::Hex, 2},
      {"+0(%di):string[2]", "string[2]", TypeKind::String, 8}, {"+0(%di):b1@0/8[3]", "b1@0/8[3]", TypeKind::Bitfield, 1},
      {"+0(%di):u8[64]", "u8[64]", TypeKind::Unsigned, 1}, {"\\1:string", "string", TypeKind::String, 8},
      {"$comm:string", "string", TypeKind::String, 8},
  };
  for (const Case& c : cases) {
    const auto a = only_argument(parse_ok(std::string("p foo ") + c.text));
    EXPECT_EQ(a.type.name(), c.name) << c.text;
    EXPECT_EQ(a.type.kind, c.kind) << c.text;
    EXPECT_EQ(a.type.size, c.size) << c.text;
    EXPECT_TRUE(a.type_given || std::string(c.text).find(':') == std::string::npos);
  }
  const auto bf = only_argument(parse_ok("p foo +0(%di):b3@5/32"));
  EXPECT_EQ(bf.type.bit_width, 3);
  EXPECT_EQ(bf.type.bit_offset, 5);
}

TEST(ParseArgumentErrors, KernelMessagesAndCarets) {
  // Every one of these was written to this machine's uprobe_events; column and message are
  // the kernel's (prefix "p:xx /tmp/xp/t:0x1149 " is 22 characters).
  const std::string p = "p:xx /tmp/xp/t:0x1149 ";
  expect_error(p + "%r8d", "Invalid register name", 22);
  expect_error(p + "%eax", "Invalid register name", 22);
  expect_error(p + "$comm:u8", "$comm and immediate-string only accepts string type", 28);
  expect_error(p + "$stack:string", "String accepts only memory argument", 29);
  expect_error(p + "\\x10", "Invalid immediate value", 23);
  expect_error(p + "x=%ax:b0@0/32", "Invalid bitfield", 28);
  expect_error(p + "x=%ax:b4@30/32", "Invalid bitfield", 28);
  expect_error(p + "x=%ax:b4@0/12", "Unknown type is specified", 28);
  expect_error(p + "x=%ax:b4@/32", "Invalid bitfield", 28);
  expect_error(p + "x=%ax:b4@1/", "Unknown type is specified", 28);
  expect_error(p + "x=%ax:b4x@1/32", "Invalid bitfield", 28);
  expect_error(p + "x=%ax:x64[0]", "Invalid array size", 32);
  expect_error(p + "x=%ax:x64[65]", "Array number is too big", 32);
  expect_error(p + "x=+0(%ax):x64[65]", "Array number is too big", 36);
  expect_error(p + "x=+0(%ax):x64[3", "Array is not closed", 37);
  expect_error(p + "x=+0(%ax):x64[3]a", "Array has wrong suffix", 38);
  expect_error(p + "x=+0(%ax):x64[a]", "Invalid array size", 36);
  expect_error(p + "x=%ax:x8[2]", "String accepts only memory argument", 28);
  expect_error(p + "x=+0(%ax):string[65]", "Array number is too big", 39);
  expect_error(p + "1x=%ax", "Argument name must follow the same rules as C identifiers", 22);
  expect_error(p + "x=", "No argument expression", 24);
  expect_error(p + "=%ax", "Argument name is not specified", 22);
  expect_error(p + std::string(47, 'a') + "=%ax", "Argument name is too long", 22);
  expect_error(p + "x=%ax x=%bx", "This argument name is already used", 28);
  expect_error(p + "common_pid=%ax", "This argument name is already used", 22);
  expect_error(p + "%ax arg1=%dx", "This argument name is already used", 26);
  expect_error(p + "arg2=%dx %ax", "This argument name is already used", 31);
  expect_error(p + "x=+(%ax)", "Invalid dereference offset", 24);
  expect_error(p + "x=+0x(%ax)", "Invalid dereference offset", 24);
  expect_error(p + "x=+0%ax", "Dereference needs a brace", 24);
  expect_error(p + "x=+0(%ax))", "Invalid register name", 27);
  expect_error(p + "x=+0(%di", "Dereference brace is not closed", 30);
  expect_error(p + "x=+0($comm)", "$comm can not be dereferenced", 27);
  expect_error(p + "x=+0(\\\"abc\")", "$comm can not be dereferenced", 27);
  expect_error(p + "x=$stackx", "Invalid $-variable specified", 24);
  expect_error(p + "x=$foo", "Invalid $-variable specified", 24);
  expect_error(p + "x=%ax:%pd", "Unknown type is specified", 28);
  expect_error(p + "x=%ax:", "Unknown type is specified", 28);
  expect_error(p + "x=%ax::u8", "Unknown type is specified", 28);
  expect_error(p + "x=%ax:U8", "Unknown type is specified", 28);
  expect_error(p + "x=\\\"abc", "String is not closed with '\"'", 29);
  expect_error(p + "imms=\\\"hi there\"", "String is not closed with '\"'", 31);
  expect_error(p + "x=\\\"abc\":u8", "$comm and immediate-string only accepts string type", 31);
  expect_error(p + "x=\\abc", "Invalid immediate value", 25);
  expect_error(p + "x=%ax:string", "String accepts only memory argument", 28);
  expect_error(p + "x=$retval", "$retval is not available on probe", 24);
  expect_error(p + "x=@0xzz", "Invalid memory address", 24);
  expect_error(p + "x=@+zz", "Invalid file offset value", 24);
}

TEST(ParseArgumentErrors, XprobeOwnCases) {
  expect_error("p foo x=abc", "Invalid fetch argument", 8);
  expect_error("p foo x=+0(%ax)x", "Invalid fetch argument", 15);  // the kernel ignores the x
  expect_error("p foo x=+0()", "Invalid fetch argument", 11);
  expect_error("p foo $arg0", "Invalid argument number", 6);
  expect_error("p foo a0", "Invalid argument number", 6);
  expect_error("p foo $arg129", "Invalid argument number", 6);
  expect_error("p foo+4 $arg1", "$arg* can be used only on function entry or exit", 8);
  expect_error("p foo rv", "$retval is not available on probe", 6);
  expect_error("p foo r27", "Invalid register name", 6);
  expect_error("p foo x=@", "Invalid memory address", 8);
  expect_error("p foo x=@sym+", "Invalid memory address", 8);
  // The kernel's uprobe parser has no symstr (KernelConformance.LimitsHeadsAndPlaces...).
  expect_error("p foo x=%ip:symstr", "Unknown type is specified", 12);
  expect_error("p foo x=$comm:symstr", "$comm and immediate-string only accepts string type", 14);
  expect_error("p foo x=\\1:x8[2]", "String accepts only memory argument", 11);
  expect_error("p foo x=-+8(%ax)", "Invalid dereference offset", 8);
  expect_error("p foo x=--8(%ax)", "Invalid dereference offset", 8);
  expect_error("p foo x=+08(%ax)", "Invalid dereference offset", 8);
  expect_error("p foo x=\\+-+8", "Invalid immediate value", 9);
  expect_error("p foo+-8", "Invalid probed address or symbol", 2);
  expect_error("p /tmp/xp/t:0x1149%return%return", "Invalid probed address suffix", 18);
  expect_error("p /tmp/xp/t:0x", "Invalid uprobe offset", 12);
  std::string too_deep = "%sp";
  for (unsigned i = 0; i <= kMaxDereferenceDepth; ++i) too_deep = "+0(" + too_deep + ")";
  // 15 levels: the kernel's caret is inside the outermost one.
  expect_error("p foo " + too_deep, "Dereference is too much nested", 6 + 3);
  std::string too_deep_at = "@0x10";
  for (unsigned i = 0; i < kMaxDereferenceDepth; ++i) too_deep_at = "+0(" + too_deep_at + ")";
  expect_error("p foo " + too_deep_at, "Dereference is too much nested", 6 + 3);
  // MAX_ARGSTR_LEN: 63 characters after NAME=.
  expect_error("p foo x=\\" + std::string(63, '0'), "Argument expression is too long", 8);
  EXPECT_TRUE(parse_definition("p foo x=\\" + std::string(62, '0')).ok());
  std::string many = "p foo";
  for (unsigned i = 0; i < kMaxArguments; ++i) many += " %ax";
  EXPECT_TRUE(parse_definition(many).ok());
  expect_error(many + " %bx", "Too many arguments are specified", many.size() + 1);
}

TEST(ParseArguments, SignsAsTheKernelsKstrtolReadsThem) {
  EXPECT_EQ(only_argument(parse_ok("p foo +-8(%ax)")).expression.derefs[0].offset, -8);
  EXPECT_EQ(only_argument(parse_ok("p foo ++8(%ax)")).expression.derefs[0].offset, 8);
  EXPECT_EQ(only_argument(parse_ok("p foo +0x8(%ax)")).expression.derefs[0].offset, 8);
  EXPECT_EQ(only_argument(parse_ok("p foo \\++8")).expression.source.value, 8u);
  EXPECT_EQ(only_argument(parse_ok("p foo \\+-8")).expression.source.value, ~uint64_t{7});
  EXPECT_EQ(only_argument(parse_ok("p foo \\010")).expression.source.value, 8u);  // octal
  EXPECT_EQ(parse_ok("p /tmp/xp/t:01111").place.address, 0x249u);
  EXPECT_EQ(parse_ok("p /tmp/xp/t:01111").event, "p_t_0x249");  // kernel
  const auto string_array = only_argument(parse_ok("p foo \\1:string[2]"));
  EXPECT_EQ(string_array.type.array_count, 2u);
}

TEST(ParseArguments, ArgumentsAreAllowedOnReturnProbes) {
  const auto d = parse_ok("r foo $arg1 a2");
  EXPECT_EQ(d.arguments[0].expression.source.kind, FetchSource::Kind::Argument);
  EXPECT_EQ(d.arguments[1].expression.source.value, 2u);
}

// ---- -f files ---------------------------------------------------------------------------------

TEST(ParseFile, CommentsBlankLinesAndLineNumbers) {
  const auto parsed = parse_definitions_file(
      "# probes for the demo\n"
      "\n"
      "p:open do_sys_open a1   # first argument\n"
      "   \t\n"
      "r:open_ret do_sys_open rv\n",
      "demo.probes");
  ASSERT_TRUE(parsed.ok()) << parsed.error().render();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ(parsed->at(0).event, "open");
  EXPECT_EQ(parsed->at(0).line, 3u);
  EXPECT_EQ(parsed->at(0).command, "p:open do_sys_open a1");
  EXPECT_EQ(parsed->at(1).kind, ProbeKind::Return);
  EXPECT_EQ(parsed->at(1).line, 5u);
}

TEST(ParseFile, ErrorNamesTheLine) {
  const auto parsed = parse_definitions_file("p foo %ax\n\np foo %bogus\np bar\n", "x.probes");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().line, 3u);
  EXPECT_EQ(parsed.error().column, 6u);
  EXPECT_EQ(parsed.error().render(),
            "x.probes:3: xprobe: error: Invalid register name\n"
            "  Command: p foo %bogus\n"
            "                 ^\n");
}

TEST(ParseFile, EmptyAndCommentOnlyFiles) {
  EXPECT_TRUE(parse_definitions_file("", "e")->empty());
  EXPECT_TRUE(parse_definitions_file("# nothing\n#\n", "e")->empty());
  const auto no_newline = parse_definitions_file("p foo", "e");
  ASSERT_TRUE(no_newline.ok());
  EXPECT_EQ(no_newline->size(), 1u);
}

}  // namespace
}  // namespace xprobe::probe
