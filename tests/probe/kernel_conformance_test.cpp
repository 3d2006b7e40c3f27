// Writes definitions into the running kernel's uprobe_events and checks that it accepts and
// refuses the same ones xprobe does, with the same message and caret. Skips unless root and
// tracefs is usable. Leaves uprobe_events as it found it (removes only its own events).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "probe/definition_list.h"
#include "probe/definition_parser.h"
#include "probe/fetcharg_parser.h"
#include "probe/definition_text.h"
#include "kernel_tracefs.h"

namespace xprobe::probe {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct KernelVerdict {
  bool accepted = false;
  int error = 0;
  std::string message;
  long column = -1;  // -1: the kernel logged nothing for this command
};

// The newest error_log entry for `definition` (other processes may log too).
KernelVerdict ask_kernel(testing::KernelTracefs& tracefs, const std::string& definition) {
  KernelVerdict verdict;
  verdict.accepted = tracefs.define(definition, &verdict.error);
  if (verdict.accepted) return verdict;
  std::istringstream log(tracefs.error_log());
  std::vector<std::string> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(line);
  for (size_t i = lines.size(); i >= 3; --i) {
    const std::string& first = lines[i - 3];
    if (lines[i - 2] != "  Command: " + definition) continue;
    const size_t at = first.find("error: ");
    if (at == std::string::npos) continue;
    verdict.message = first.substr(at + 7);
    verdict.column = static_cast<long>(lines[i - 1].size()) - 1 - 11;
    break;
  }
  return verdict;
}

std::string own_binary() {
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return length > 0 ? std::string(self, static_cast<size_t>(length)) : std::string();
}

// The uprobe_events lines of `group`, in the kernel's order.
std::vector<std::string> listed_events(const testing::KernelTracefs& tracefs, const std::string& group) {
  std::istringstream listing(read_file(tracefs.root() + "/uprobe_events"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(listing, line);) {
    if (line.rfind("p:" + group + "/", 0) == 0 || line.rfind("r:" + group + "/", 0) == 0) lines.push_back(line);
  }
  return lines;
}

TEST(KernelConformance, SameVerdictsAsTheRunningKernel) {
  std::string why_not;
  auto tracefs = testing::KernelTracefs::open(&why_not);
  if (!tracefs) GTEST_SKIP() << why_not;
  char self[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(length, 0);
  const std::string binary(self, static_cast<size_t>(length));
  const std::string p = "p:xprobe_conf/ev " + binary + ":0x0 ";
  // Forms both sides support; xprobe extensions (symbols, @SYM, $argN, symbol types, aliases)
  // and the kernel's quirks (text after a dereference, r<N> dropping the name, arrays refused
  // after +u dereferences) are left out.
  const std::vector<std::string> cases = {
      p + "%ax %bx %cx %dx %si %di %bp %sp %r8 %r15 %ip %flags",
      p + "a=+0(%di):u8 b=+8(%si):s16 c=-8(%sp):x32 d=+0(+8(%di)):u64",
      p + "s=+0(%si):string u=+0(%si):ustring c=+0(%si):char[3] arr=+4(%di):s32[4]",
      p + "b=+0(%di):b3@5/32 w=%ax:b4@28/32 $comm \\123 \\\"lit\" $stack $stack3 @0x1000 @+0x10",
      p + "x=+4(%di):x16[2] y=+0(%sp):string[2] z=+u4(%di):x16",
      "r:xprobe_conf/ev " + binary + ":0x0 rv=$retval %ax",
      "p:xprobe_conf/ev " + binary + ":0x0%return $retval",
      "p:xprobe_conf/ev " + binary + ":0x0(0x10)",
      p + "%eax", p + "%r8d", p + "$comm:u8", p + "$stack:string", p + "\\x10",
      p + "x=%ax:b0@0/32", p + "x=%ax:b4@30/32", p + "x=%ax:b4@0/12", p + "x=%ax:x64[0]",
      p + "x=+0(%ax):x64[65]", p + "x=+0(%ax):x64[3", p + "x=+0(%ax):x64[3]a", p + "1x=%ax",
      p + "x=", p + "=%ax", p + "x=%ax x=%bx", p + "common_pid=%ax", p + "x=+(%ax)", p + "x=+0%ax",
      p + "x=+0($comm)", p + "x=$stackx", p + "x=%ax:string", p + "x=$retval", p + "x=\\\"abc",
      p + "x=@0xzz", p + "x=@+zz", p + "x=%ax:U8", p + "%ax arg1=%dx",
      "p:xprobe_conf/ev " + binary + ":0x0x", "p:xprobe_conf/ev " + binary + ":0x0%foo",
      "p:xprobe_conf/ev " + binary + ":0x0(0x10", "p:/ev " + binary + ":0x0", "p:1g/ev " + binary + ":0x0",
      "p:xprobe_conf/1e " + binary + ":0x0",
      p + "x=+-8(%ax) y=++8(%ax) \\++8 \\+-8 \\010 z=\\1:string[2] w=@0x10:x8[2] q=\\\"\"",
      p + "x=-+8(%ax)", p + "x=--8(%ax)", p + "x=+08(%ax)", p + "x=\\1:x8[2]", p + "x=%ip:x8[2]",
      p + "x=+0(%ax):string[0]", p + "x=+0(%ax):char[a", p + "x=\\\"a\":string[1]", p + "x=\\\"",
      p + std::string(32, 'a') + "=%ax", p + std::string(33, 'a') + "=%ax", p + "__probe_ip=%ax",
      "p:xprobe_conf/ev " + binary + ":0x0(zz)", "p:xprobe_conf/ev " + binary + ":0x0()",
      "p:xprobe_conf/ev " + binary + ":0x0%return%return", "p:xprobe_conf/ev " + binary + ":0x",
      "p:xprobe_conf/ev " + binary + ":00",
  };
  for (const std::string& definition : cases) {
    const auto ours = parse_definition(definition);
    const KernelVerdict kernel = ask_kernel(*tracefs, definition);
    if (kernel.accepted) {
      // The kernel's listing of the event must be what xprobe writes back.
      std::istringstream listing(read_file(tracefs->root() + "/uprobe_events"));
      std::string listed;
      for (std::string line; std::getline(listing, line);) {
        if (line.rfind("p:xprobe_conf/", 0) == 0 || line.rfind("r:xprobe_conf/", 0) == 0) listed = line;
      }
      if (ours.ok()) {
        EXPECT_EQ(to_uprobe_events_line(ours.value()), listed) << definition;
      }
      tracefs->undefine("xprobe_conf/ev");
    }
    EXPECT_EQ(ours.ok(), kernel.accepted) << definition << "\n" << (ours.ok() ? "" : ours.error().render())
                                          << "kernel: " << kernel.message << " (" << std::strerror(kernel.error) << ")";
    if (!ours.ok() && !kernel.accepted && kernel.column >= 0) {
      EXPECT_EQ(ours.error().message, kernel.message) << definition;
      EXPECT_EQ(static_cast<long>(ours.error().column), kernel.column) << definition;
    }
  }
}

// The kernel's limits on one argument and on a definition, its heads with text between the
// type and the ':' (the uprobe parser ignores it), and the caret of a place it cannot read.
TEST(KernelConformance, LimitsHeadsAndPlacesAsTheRunningKernel) {
  std::string why_not;
  auto tracefs = testing::KernelTracefs::open(&why_not);
  if (!tracefs) GTEST_SKIP() << why_not;
  const std::string binary = own_binary();
  ASSERT_FALSE(binary.empty());
  const std::string p = "p:xprobe_conf/ev " + binary + ":0x0 ";
  auto nested = [](unsigned depth, const std::string& inner) {
    std::string text = inner;
    for (unsigned i = 0; i < depth; ++i) text = "+0(" + text + ")";
    return text;
  };
  std::string many_arguments = p;
  for (unsigned i = 0; i < kMaxArguments; ++i) many_arguments += " %ax";
  struct Case {
    std::string definition;
    bool compare_message = true;  // false: a place only xprobe reads (symbols); the caret still
  };
  std::vector<Case> cases = {
      // Dereference depth and argument length (MAX_ARGSTR_LEN = 63, after NAME=).
      {p + nested(12, "%ax")}, {p + nested(13, "%ax")}, {p + nested(14, "%ax")}, {p + nested(15, "%ax")},
      {p + "x=" + nested(13, "@0x10")}, {p + "x=" + nested(14, "@0x10")}, {p + "x=" + nested(13, "@+0x10")},
      {p + "x=" + nested(14, "@+0x10")}, {p + "x=" + nested(14, "%ax") + ":string"},
      {p + "x=\\" + std::string(62, '0')}, {p + "x=\\" + std::string(63, '0')}, {p + "\\" + std::string(63, '0')},
      {p + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=\\" + std::string(62, '0')},
      {p + "x=\\\"" + std::string(60, 'a') + "\""}, {p + "x=\\\"" + std::string(61, 'a') + "\""},
      {many_arguments}, {many_arguments + " %bx"},
      // Types the uprobe parser refuses.
      {p + "x=%ax:symstr"}, {p + "x=+0(%ax):symstr"},
      // Places: the caret of what the kernel cannot read.
      {"p:xprobe_conf/ev " + binary + ":hoge-fuga", false}, {"p:xprobe_conf/ev " + binary + ":hoge+1000-1000", false},
      {"p:xprobe_conf/ev " + binary + ":hoge+0x10", false},
  };
  for (const Case& c : cases) {
    const auto ours = parse_definition(c.definition);
    const KernelVerdict kernel = ask_kernel(*tracefs, c.definition);
    if (kernel.accepted) tracefs->undefine("xprobe_conf/ev");
    if (c.compare_message) {
      EXPECT_EQ(ours.ok(), kernel.accepted) << c.definition << "\n" << (ours.ok() ? "" : ours.error().render())
                                            << "kernel: " << kernel.message;
    }
    if (!ours.ok() && !kernel.accepted && kernel.column >= 0) {
      if (c.compare_message) {
        EXPECT_EQ(ours.error().message, kernel.message) << c.definition;
      }
      EXPECT_EQ(static_cast<long>(ours.error().column), kernel.column) << c.definition << "\n" << ours.error().render();
    }
  }
  // `symbol` on a uprobe: the kernel refuses it (it names kernel symbols); xprobe names the
  // traced process's, a deliberate extension (README, "Kernel compatibility").
  EXPECT_FALSE(ask_kernel(*tracefs, p + "x=%ax:symbol").accepted);
  EXPECT_EQ(ask_kernel(*tracefs, p + "x=%ax:symbol").message, "Unknown type is specified");
  EXPECT_TRUE(parse_definition(p + "x=%ax:symbol").ok());
  // Heads with text between the type and ':': accepted, the text ignored; the kernel then
  // names the event itself (xprobe keeps the name written, README's compatibility table).
  const std::string derived = "uprobes/" + derive_event_name(parse_definition(p).value().place, ProbeKind::Entry, "");
  for (const std::string head : {"r5", "p5", "pfoo", "r4097", "rx", "r16:xprobe_conf/ev", "p2:xprobe_conf/ev"}) {
    const std::string definition = head + " " + binary + ":0x0 %ax";
    const auto ours = parse_definition(definition);
    const KernelVerdict kernel = ask_kernel(*tracefs, definition);
    EXPECT_TRUE(kernel.accepted) << definition << ": " << kernel.message;
    EXPECT_EQ(ours.ok(), kernel.accepted) << definition << (ours.ok() ? "" : "\n" + ours.error().render());
    if (kernel.accepted) {
      const auto listed = listed_events(*tracefs, "uprobes");
      ASSERT_FALSE(listed.empty()) << definition;
      EXPECT_EQ(listed.back().substr(2, derived.size()), derived) << definition;
      if (ours.ok()) {
        EXPECT_EQ(ours->kind, head[0] == 'r' ? ProbeKind::Return : ProbeKind::Entry) << definition;
        // The listing without the name is the kernel's: no MAXACTIVE.
        ProbeDefinition renamed = ours.value();
        renamed.group = "uprobes";
        renamed.event = derived.substr(8);
        EXPECT_EQ(to_uprobe_events_line(renamed), listed.back()) << definition;
      }
      EXPECT_TRUE(tracefs->undefine(derived)) << definition;
    }
  }
}

// A second definition for an existing event: appended as another probe point only when the
// probe type and every argument agree; "-:GRP/EVENT PLACE" removes only that point.
TEST(KernelConformance, MultiProbeEventsAsTheRunningKernel) {
  std::string why_not;
  auto tracefs = testing::KernelTracefs::open(&why_not);
  if (!tracefs) GTEST_SKIP() << why_not;
  const std::string binary = own_binary();
  ASSERT_FALSE(binary.empty());
  const std::string event = "xprobe_conf/multi";
  const std::vector<std::string> sequence = {
      "p:" + event + " " + binary + ":0x0 x=%ax y=+0(%di):u32",
      "r:" + event + " " + binary + ":0x10 x=%ax y=+0(%di):u32",       // DIFF_PROBE_TYPE
      "p:" + event + " " + binary + ":0x10 z=%ax y=+0(%di):u32",       // name differs
      "p:" + event + " " + binary + ":0x10 x=%ax y=+0(%di):s32",       // type differs
      "p:" + event + " " + binary + ":0x10 x=%ax y=+0(%di):u32[2]",    // array length differs
      "p:" + event + " " + binary + ":0x10 x=%ax",                     // fewer
      "p:" + event + " " + binary + ":0x10 x=%ax y=+0(%di):u32 w=%bx", // more
      "p:" + event + " " + binary + ":0x0 x=%ax y=+0(%di):u32",        // SAME_PROBE
      "p:" + event + " " + binary + ":0x0 x=%bx y=+0(%di):u32",        // same place, other fetch: added
      "p:" + event + " " + binary + ":0x10 x=%ax y=+4(%si):u32",       // added
      "p:" + event + " " + binary + ":0x20 x=%cx y=+8(%si):u32",       // added
      "-:" + event + " " + binary + ":0x0000000000000010",             // removes the 0x10 point only
      "-:" + event + " " + binary + ":0x0000000000000000 x=%ax",       // and the first 0x0 one
  };
  DefinitionList ours;
  for (const std::string& definition : sequence) {
    const auto parsed = parse_definition(definition);
    ASSERT_TRUE(parsed.ok()) << parsed.error().render();
    const auto refused = ours.apply(parsed.value());
    const KernelVerdict kernel = ask_kernel(*tracefs, definition);
    EXPECT_EQ(!refused.has_value(), kernel.accepted) << definition << "\n"
                                                     << (refused ? refused->render() : "") << "kernel: " << kernel.message;
    if (refused && !kernel.accepted && kernel.column >= 0) {
      EXPECT_EQ(refused->message, kernel.message) << definition;
      EXPECT_EQ(static_cast<long>(refused->column), kernel.column) << definition << "\n" << refused->render();
    }
  }
  std::vector<std::string> listed_by_us;
  for (const ProbeDefinition& definition : ours.definitions()) listed_by_us.push_back(to_uprobe_events_line(definition));
  EXPECT_EQ(listed_by_us, listed_events(*tracefs, "xprobe_conf"));
  EXPECT_EQ(listed_by_us.size(), 2u);
  // The last point goes with the event.
  for (const std::string& definition : {"-:" + event}) {
    EXPECT_FALSE(ours.apply(parse_definition(definition).value()).has_value());
    EXPECT_TRUE(ask_kernel(*tracefs, definition).accepted);
  }
  EXPECT_TRUE(ours.definitions().empty());
  EXPECT_TRUE(listed_events(*tracefs, "xprobe_conf").empty());
  // Nothing left to delete: both refuse (the kernel with ENOENT and no log).
  EXPECT_TRUE(ours.apply(parse_definition("-:" + event).value()).has_value());
  EXPECT_FALSE(ask_kernel(*tracefs, "-:" + event).accepted);
}

}  // namespace
}  // namespace xprobe::probe
