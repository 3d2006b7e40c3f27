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

#include "probe/definition_parser.h"
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

}  // namespace
}  // namespace xprobe::probe
