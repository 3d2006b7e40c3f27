// `xprobe check` on examples/probe_points.S, whose instructions are known by construction.
#include <fmt/format.h>
#include <cstdlib>
#include <gtest/gtest.h>

#include "run_command.h"

namespace {

CommandResult check(const std::string& place) {
  return run_command(fmt::format("{} check {} {}", XPROBE_PATH, PROBE_POINTS_PATH, place));
}

}  // namespace

TEST(CheckCommand, AcceptsInstructionBoundaries) {
  for (const char* place : {"accepted_function", "accepted_function+1", "accepted_function+4",
                            "accepted_function+11", "accepted_function+14", "accepted_function+15"}) {
    auto result = check(place);
    EXPECT_EQ(result.exit_status, 0) << place << ": " << result.out;
    EXPECT_NE(result.out.find("accepted"), std::string::npos) << result.out;
  }
}

TEST(CheckCommand, RefusesTheMiddleOfAnInstruction) {
  const uint64_t start = nm_address(PROBE_POINTS_PATH, "accepted_function");
  ASSERT_NE(start, 0u);
  // push %rbp (1 byte), then mov %rsp,%rbp = 48 89 e5: +2 is inside it.
  auto result = check("accepted_function+2");
  EXPECT_EQ(result.exit_status, 1) << result.out;
  EXPECT_NE(result.out.find(fmt::format("Could not insert probe at address {:#x} due to: not on an instruction boundary",
                                        start + 2)),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find(fmt::format("inside the instruction at {:#x} (48 89 e5)", start + 1)), std::string::npos)
      << result.out;
}

TEST(CheckCommand, UnknownInstructionInTheSeedsWords) {
  const uint64_t start = nm_address(PROBE_POINTS_PATH, "unknown_instruction_function");
  ASSERT_NE(start, 0u);
  // nop; .byte 0x06 (invalid in 64-bit mode); lea -0x25(%rip),%rdx; ret
  auto result = check("unknown_instruction_function+2");
  EXPECT_EQ(result.exit_status, 1) << result.out;
  EXPECT_EQ(result.out, fmt::format("Could not insert probe at address {:#x} due to: Unknown instruction: "
                                    "06 48 8d 15 db ff ff ff c3\n",
                                    start + 2));
  // Before the bad byte, the walk has not met it: accepted.
  EXPECT_EQ(check("unknown_instruction_function").exit_status, 0);
}

TEST(CheckCommand, RefusesPrivilegedInstruction) {
  auto result = check("privileged_function+1");
  EXPECT_EQ(result.exit_status, 1) << result.out;
  EXPECT_NE(result.out.find("cannot probe"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("f4"), std::string::npos) << result.out;  // hlt
}

TEST(CheckCommand, ClearErrorsForBadInput) {
  auto missing = run_command(fmt::format("{} check /nonexistent/file main", XPROBE_PATH));
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_NE(missing.out.find("/nonexistent/file: cannot open"), std::string::npos) << missing.out;
  auto not_elf = run_command(fmt::format("{} check /etc/hostname main", XPROBE_PATH));
  EXPECT_EQ(not_elf.exit_status, 2);
  EXPECT_NE(not_elf.out.find("not an ELF file"), std::string::npos) << not_elf.out;
  auto no_symbol = check("no_such_function");
  EXPECT_EQ(no_symbol.exit_status, 2);
  EXPECT_NE(no_symbol.out.find("no function named 'no_such_function'"), std::string::npos) << no_symbol.out;
  auto bad_offset = check("accepted_function+zz");
  EXPECT_EQ(bad_offset.exit_status, 2);
  EXPECT_NE(bad_offset.out.find("bad offset"), std::string::npos) << bad_offset.out;
}

// A stripped object (dash has no symbols): the .eh_frame FDE around an address delimits the
// function the checker walks from; .init has neither symbol nor FDE (readelf -wf lists none).
TEST(CheckCommand, StrippedCodeIsWalkedFromItsEhFrameFunctionStart) {
  if (run_command("nm /usr/bin/dash").out.find("no symbols") == std::string::npos) GTEST_SKIP() << "dash has symbols";
  const CommandResult frames = run_command("readelf -wf /usr/bin/dash");
  const size_t at = frames.out.find(" pc=");
  ASSERT_NE(at, std::string::npos) << frames.out;
  const uint64_t begin = std::strtoull(frames.out.c_str() + at + 4, nullptr, 16);
  auto start = run_command(fmt::format("{} check /usr/bin/dash {:#x}", XPROBE_PATH, begin));
  EXPECT_EQ(start.exit_status, 0) << start.out;
  EXPECT_NE(start.out.find("accepted"), std::string::npos) << start.out;
  // .init's address from readelf's section headers ("[12] .init PROGBITS 0000000000004000 ...").
  const CommandResult sections = run_command("readelf -SW /usr/bin/dash");
  const size_t init_at = sections.out.find(" .init ");
  ASSERT_NE(init_at, std::string::npos) << sections.out;
  const size_t type_at = sections.out.find("PROGBITS", init_at);
  const uint64_t init_address = std::strtoull(sections.out.c_str() + type_at + 8, nullptr, 16);
  ASSERT_EQ(frames.out.find(fmt::format(" pc={:016x}", init_address)), std::string::npos) << "an FDE covers .init";
  auto init = run_command(fmt::format("{} check /usr/bin/dash {:#x}", XPROBE_PATH, init_address));
  EXPECT_EQ(init.exit_status, 2) << init.out;
  EXPECT_NE(init.out.find(fmt::format("no function symbol or .eh_frame FDE contains address {:#x}", init_address)),
            std::string::npos)
      << init.out;
}
