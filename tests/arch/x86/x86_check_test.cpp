// The x86 probe-point checker: boundaries found by decoding from the function start, the
// kernel-style refusal for undecodable bytes, and the unprobeable-instruction policy.
#include <gtest/gtest.h>

#include <vector>

#include "arch/x86/x86_check.h"

namespace xprobe::arch::x86 {
namespace {

using insn::x86::DecoderConfig;
using insn::x86::Mode;
using insn::x86::Vendor;

constexpr DecoderConfig k64{Mode::Long64, Vendor::Amd};
constexpr DecoderConfig k32{Mode::Protected32, Vendor::Amd};
constexpr uint64_t kStart = 0x401000;

// push rbp; mov rbp,rsp; lea rdx,[rip-0x25]; ret
const std::vector<uint8_t> kFunction = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x8d, 0x15, 0xdb, 0xff, 0xff, 0xff, 0xc3};

CheckOutcome check(const std::vector<uint8_t>& bytes, uint64_t probe, const DecoderConfig& config = k64) {
  return check_probe_point(bytes, kStart, probe, config);
}

TEST(X86Check, AcceptsInstructionStarts) {
  CheckOutcome o = check(kFunction, kStart);
  EXPECT_EQ(o.verdict, Verdict::Accepted);
  EXPECT_EQ(o.insn_address, kStart);
  EXPECT_EQ(o.insn_length, 1);
  EXPECT_EQ(o.bytes, std::vector<uint8_t>({0x55}));
  EXPECT_EQ(o.kind, "none");
  o = check(kFunction, kStart + 4);
  EXPECT_EQ(o.verdict, Verdict::Accepted);
  EXPECT_EQ(o.insn_length, 7);
  EXPECT_EQ(o.bytes, std::vector<uint8_t>({0x48, 0x8d, 0x15, 0xdb, 0xff, 0xff, 0xff}));
  o = check(kFunction, kStart + 11);
  EXPECT_EQ(o.verdict, Verdict::Accepted);
  EXPECT_EQ(o.kind, "ret");
  EXPECT_EQ(o.message(), "Probe at address 0x40100b accepted: c3 (1 bytes, ret)");
}

TEST(X86Check, NamesTheCoveringInstruction) {
  const CheckOutcome o = check(kFunction, kStart + 6);
  EXPECT_EQ(o.verdict, Verdict::NotOnBoundary);
  EXPECT_EQ(o.insn_address, kStart + 4);
  EXPECT_EQ(o.insn_length, 7);
  EXPECT_EQ(o.message(),
            "Could not insert probe at address 0x401006 due to: not on an instruction boundary: it is inside the "
            "instruction at 0x401004 (48 8d 15 db ff ff ff)");
}

TEST(X86Check, OutsideTheFunction) {
  EXPECT_EQ(check(kFunction, kStart - 1).verdict, Verdict::OutOfRange);
  EXPECT_EQ(check(kFunction, kStart + kFunction.size()).verdict, Verdict::OutOfRange);
}

// The seed's refusal: the address, then up to 10 bytes from the first undecodable instruction.
TEST(X86Check, UnknownInstructionMessage) {
  // nop; then 06 (push es, invalid in 64-bit mode) followed by more bytes.
  const std::vector<uint8_t> bytes = {0x90, 0x06, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b};
  const CheckOutcome o = check(bytes, kStart + 5);
  EXPECT_EQ(o.verdict, Verdict::UnknownInstruction);
  EXPECT_EQ(o.insn_address, kStart + 1);
  EXPECT_EQ(o.message(),
            "Could not insert probe at address 0x401005 due to: Unknown instruction: 06 01 02 03 04 05 06 07 08 09");
  // The same bytes are a valid push es in 32-bit mode; the sweep goes on.
  EXPECT_NE(check(bytes, kStart + 2, k32).verdict, Verdict::UnknownInstruction);
  // Probing the undecodable instruction itself is refused the same way.
  EXPECT_EQ(check(bytes, kStart + 1).verdict, Verdict::UnknownInstruction);
}

TEST(X86Check, UnknownInstructionStopsAtTheFunctionEnd) {
  // The last instruction is cut off by the end of the function: fewer than 10 bytes shown.
  const std::vector<uint8_t> bytes = {0x90, 0x48, 0x8d, 0x15, 0xdb, 0xff};
  const CheckOutcome o = check(bytes, kStart + 1);
  EXPECT_EQ(o.verdict, Verdict::UnknownInstruction);
  EXPECT_EQ(o.message(), "Could not insert probe at address 0x401001 due to: Unknown instruction: 48 8d 15 db ff");
}

struct PolicyCase {
  std::vector<uint8_t> bytes;
  bool accepted;
  const char* what;
};

TEST(X86Check, Policy) {
  const std::vector<PolicyCase> cases = {
      {{0xcc}, false, "int3 already there"},
      {{0xcd, 0x03}, false, "int 3"},
      {{0xf1}, false, "int1"},
      {{0x0f, 0x0b}, false, "ud2"},
      {{0x0f, 0xb9, 0xc0}, false, "ud1"},
      {{0xf4}, false, "hlt"},
      {{0xfa}, false, "cli"},
      {{0xec}, false, "in al,dx"},
      {{0x0f, 0x01, 0xf8}, false, "swapgs"},
      {{0x0f, 0x22, 0xd8}, false, "mov cr3,rax"},
      {{0x0f, 0x01, 0xd5}, false, "xend"},
      {{0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00}, false, "xbegin"},
      {{0x0f, 0x01, 0xd6}, false, "xtest"},
      {{0x48, 0x0f, 0x07}, false, "sysretq"},
      {{0x48, 0xcf}, false, "iretq"},
      {{0xcb}, false, "far ret"},
      {{0xff, 0x2c, 0x24}, false, "far jmp"},
      {{0x0f, 0x05}, true, "syscall"},
      {{0xcd, 0x80}, true, "int 0x80"},
      {{0xf0, 0x48, 0x0f, 0xb1, 0x0f}, true, "lock cmpxchg"},
      {{0xe8, 0x00, 0x00, 0x00, 0x00}, true, "call rel32"},
      {{0xff, 0x25, 0x00, 0x10, 0x00, 0x00}, true, "jmp [rip]"},
      {{0xf3, 0x0f, 0x1e, 0xfa}, true, "endbr64"},
      {{0x0f, 0xa2}, true, "cpuid"},
      {{0x0f, 0x31}, true, "rdtsc"},
  };
  for (const auto& c : cases) {
    const CheckOutcome o = check(c.bytes, kStart);
    EXPECT_EQ(o.accepted(), c.accepted) << c.what << ": " << o.message();
    if (!c.accepted) {
      EXPECT_EQ(o.verdict, Verdict::Unprobeable) << c.what;
      EXPECT_FALSE(o.reason.empty()) << c.what;
      EXPECT_EQ(o.bytes, c.bytes) << c.what;
    }
  }
  // SYSENTER exists in 64-bit mode on Intel only.
  const DecoderConfig intel{Mode::Long64, Vendor::Intel};
  EXPECT_EQ(check({0x0f, 0x34}, kStart, intel).verdict, Verdict::Unprobeable);
  EXPECT_EQ(check({0x0f, 0x34}, kStart, k32).verdict, Verdict::Unprobeable);
  const CheckOutcome o = check({0x90, 0xcc}, kStart + 1);
  EXPECT_EQ(o.message().rfind("Could not insert probe at address 0x401001 due to: cannot probe the instruction cc (int): ",
                              0),
            0u)
      << o.message();
}

}  // namespace
}  // namespace xprobe::arch::x86
