// `xprobe decode` line format and sweep, on bytes whose decoding is written down by hand
// from the Intel SDM.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "run_command.h"

TEST(DecodeCommand, HexBytesLineFormat) {
  // lea rdx,[rip-0x25] (7) ; call rel32 0 (5) ; je -2 (2, to itself) ; 06 (invalid in 64-bit mode)
  auto result = run_command(fmt::format("{} decode --hex \"48 8d 15 db ff ff ff e8 00 00 00 00 74 fe 06\"", XPROBE_PATH));
  EXPECT_EQ(result.exit_status, 0) << result.out;
  EXPECT_EQ(result.out,
            "0x0\t48 8d 15 db ff ff ff\t7\tnone\n"
            "0x7\te8 00 00 00 00\t5\tcall\t0xc\n"
            "0xc\t74 fe\t2\tjcc\t0xc\n"
            "0xe\t06\t1\tbad\n");
}

TEST(DecodeCommand, I386Mode) {
  // push es (valid in 32-bit mode) ; pusha ; call rel32 ; ret
  auto result = run_command(fmt::format("{} decode --arch i386 --hex \"06 60 e8 00 00 00 00 c3\"", XPROBE_PATH));
  EXPECT_EQ(result.exit_status, 0) << result.out;
  EXPECT_EQ(result.out,
            "0x0\t06\t1\tnone\n"
            "0x1\t60\t1\tnone\n"
            "0x2\te8 00 00 00 00\t5\tcall\t0x7\n"
            "0x7\tc3\t1\tret\n");
}

TEST(DecodeCommand, FunctionOfAnElfFile) {
  const uint64_t start = nm_address(PROBE_POINTS_PATH, "accepted_function");
  ASSERT_NE(start, 0u);
  auto result = run_command(fmt::format("{} decode {} accepted_function", XPROBE_PATH, PROBE_POINTS_PATH));
  EXPECT_EQ(result.exit_status, 0) << result.out;
  EXPECT_EQ(result.out, fmt::format("{:#x}\t55\t1\tnone\n"
                                    "{:#x}\t48 89 e5\t3\tnone\n"
                                    "{:#x}\t48 8d 15 db ff ff ff\t7\tnone\n"
                                    "{:#x}\t48 89 d0\t3\tnone\n"
                                    "{:#x}\t5d\t1\tnone\n"
                                    "{:#x}\tc3\t1\tret\n",
                                    start, start + 1, start + 4, start + 11, start + 14, start + 15));
}

TEST(DecodeCommand, TruncatedInstructionAtTheEndIsBad) {
  auto result = run_command(fmt::format("{} decode --hex \"90 e8 00 00\"", XPROBE_PATH));
  EXPECT_EQ(result.exit_status, 0);
  EXPECT_EQ(result.out, "0x0\t90\t1\tnone\n0x1\te8\t1\tbad\n0x2\t00 00\t2\tnone\n");
}

TEST(DecodeCommand, RejectsBadArguments) {
  auto bad_hex = run_command(fmt::format("{} decode --hex \"4z\"", XPROBE_PATH));
  EXPECT_EQ(bad_hex.exit_status, 2);
  EXPECT_NE(bad_hex.out.find("not a list of hex bytes"), std::string::npos) << bad_hex.out;
  auto bad_arch = run_command(fmt::format("{} decode --arch sparc --hex 90", XPROBE_PATH));
  EXPECT_EQ(bad_arch.exit_status, 2);
  EXPECT_NE(bad_arch.out.find("unknown architecture 'sparc'"), std::string::npos) << bad_arch.out;
}
