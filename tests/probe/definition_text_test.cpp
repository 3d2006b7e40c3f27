#include "probe/definition_text.h"

#include <gtest/gtest.h>

#include "probe/definition_parser.h"

namespace xprobe::probe {
namespace {

std::string listed(std::string_view text) {
  auto parsed = parse_definition(text);
  EXPECT_TRUE(parsed.ok());
  return parsed.ok() ? to_uprobe_events_line(parsed.value()) : std::string();
}

TEST(DefinitionText, AsTheKernelListsUprobeEvents) {
  // Each expected line is what this machine's uprobe_events showed for the same input.
  EXPECT_EQ(listed("p:xx /tmp/xp/t:0x1149 +0(%ax):string $comm \\1 @0x10 $stack3"),
            "p:uprobes/xx /tmp/xp/t:0x0000000000001149 arg1=+0(%ax):string arg2=$comm arg3=\\1 arg4=@0x10 arg5=$stack3");
  EXPECT_EQ(listed("p /tmp/xp/t:0x1149(0x10)"), "p:uprobes/p_t_0x1149 /tmp/xp/t:0x0000000000001149(0x10)");
  EXPECT_EQ(listed("p /tmp/xp/t:0x1149%return"), "r:uprobes/p_t_0x1149 /tmp/xp/t:0x0000000000001149");
  EXPECT_EQ(listed("p:g. /tmp/xp/t:0x1149"), "p:g/p_t_0x1149 /tmp/xp/t:0x0000000000001149");
  EXPECT_EQ(listed("p:xx /tmp/xp/t:0x1149 x=+0(%ax):b4@0/32[2]"),
            "p:uprobes/xx /tmp/xp/t:0x0000000000001149 x=+0(%ax):b4@0/32[2]");
  // The uprobetracer.rst example.
  EXPECT_EQ(listed("p:zfree_entry /bin/zsh:0x46420 %ip %ax"),
            "p:uprobes/zfree_entry /bin/zsh:0x0000000000046420 arg1=%ip arg2=%ax");
}

TEST(DefinitionText, XprobePlaces) {
  EXPECT_EQ(listed("p libc.so.6:malloc+16 %di"), "p:uprobes/malloc_16 libc.so.6:malloc+0x10 arg1=%di");
  EXPECT_EQ(listed("r8:ret foo"), "r:uprobes/ret foo");  // the kernel never lists a MAXACTIVE
  EXPECT_EQ(listed("p 0x401000"), "p:uprobes/p_0x401000 0x401000");
  EXPECT_EQ(listed("-:g/e"), "-:g/e");
}

}  // namespace
}  // namespace xprobe::probe
