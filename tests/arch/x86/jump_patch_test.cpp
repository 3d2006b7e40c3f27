// The jump-patch planner and the trampoline writer. The trampolines are not only decoded:
// they run, in this process, in front of hand-assembled functions, with a stand-in for the
// agent that records the register block it is given. The patched functions must return what
// the unpatched ones return, and the block must hold the registers of the call.
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "arch/x86/probe_support/jump_patch.h"
#include "arch/x86/probe_support/trampoline.h"
#include "insn/x86/decoder.h"

namespace xprobe::arch::x86 {
namespace {

using Bytes = std::vector<uint8_t>;

Result<JumpPatchPlan> plan_for(const Bytes& code, uint64_t start, uint64_t address, std::vector<CodeRange> parts = {},
                               std::vector<uint64_t> others = {}, JumpPatchPlace place = JumpPatchPlace::FunctionEntry,
                               std::vector<uint64_t> landing_pads = {}) {
  JumpPatchFunction function;
  function.code = {code, start};
  function.split_parts = std::move(parts);
  function.other_symbols = std::move(others);
  function.landing_pads = std::move(landing_pads);
  return plan_jump_patch(function, address, place);
}

Result<JumpPatchPlan> return_site_plan(const Bytes& code, uint64_t start, uint64_t address, std::vector<uint64_t> pads = {}) {
  return plan_for(code, start, address, {}, {}, JumpPatchPlace::ReturnSite, std::move(pads));
}

// f(n) at 0: n*(n-1) by a loop calling g(k) = 2k at +0x100. The return site at 0x15 is followed,
// 3 bytes on, by the loop's check at 0x18, which the jmp rel32 at 0x08 enters.
//   00 push rbx; 01 push r12; 03 mov r12,rdi; 06 xor ebx,ebx; 08 jmp 0x18
//   0d mov rdi,r12; 10 call g; 15 add rbx,rax; 18 dec r12; 1b jnz 0x0d; 21 mov rax,rbx
//   24 pop r12; 26 pop rbx; 27 ret
Bytes loop_calling_g(bool short_entry_jump) {
  Bytes f = {0x53, 0x41, 0x54, 0x49, 0x89, 0xfc, 0x31, 0xdb, 0xe9, 0x0b, 0x00, 0x00, 0x00,
             0x4c, 0x89, 0xe7, 0xe8, 0xeb, 0x00, 0x00, 0x00, 0x48, 0x01, 0xc3, 0x49, 0xff, 0xcc,
             0x0f, 0x85, 0xec, 0xff, 0xff, 0xff, 0x48, 0x89, 0xd8, 0x41, 0x5c, 0x5b, 0xc3};
  if (short_entry_jump) {  // jmp rel8 0x18, then three nops
    const Bytes rel8 = {0xeb, 0x0e, 0x90, 0x90, 0x90};
    std::copy(rel8.begin(), rel8.end(), f.begin() + 8);
  }
  return f;
}
const Bytes kG = {0x48, 0x8d, 0x04, 0x3f, 0xc3};  // lea rax,[rdi+rdi]; ret

void expect_refused(const Result<JumpPatchPlan>& plan, const std::string& words) {
  ASSERT_FALSE(plan) << "accepted";
  EXPECT_NE(plan.error().message.find(words), std::string::npos) << plan.error().message;
}

TEST(JumpPatch, DisplacesWholeInstructionsCoveringFiveBytes) {
  const Bytes code = {0x48, 0x8d, 0x04, 0x7f, 0x48, 0x01, 0xf0, 0xc3};  // lea rax,[rdi+rdi*2]; add rax,rsi; ret
  auto plan = plan_for(code, 0x1000, 0x1000);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->length, 7u);
  ASSERT_EQ(plan->displaced.size(), 2u);
  EXPECT_EQ(plan->displaced[1].insn.address, 0x1004u);
}

TEST(JumpPatch, RefusesWhatCouldEnterThePatchedBytes) {
  // xor eax,eax; inc eax; nop; cmp eax,5; jl back to the inc (inside the patched bytes); ret
  const Bytes loop = {0x31, 0xc0, 0xff, 0xc0, 0x90, 0x83, 0xf8, 0x05, 0x7c, 0xf8, 0xc3};
  expect_refused(plan_for(loop, 0x1000, 0x1000), "lands at 0x1002");
  // The same back edge from a split-off part (foo.cold).
  const Bytes straight = {0x31, 0xc0, 0xff, 0xc0, 0x90, 0x90, 0xc3};
  const Bytes cold = {0xe9, 0xfd, 0xef, 0xff, 0xff};  // at 0x2000: jmp 0x1002
  expect_refused(plan_for(straight, 0x1000, 0x1000, {{cold, 0x2000}}), "lands at 0x1002");
  EXPECT_TRUE(plan_for(straight, 0x1000, 0x1000));
  // An indirect jump anywhere in the function.
  expect_refused(plan_for({0x31, 0xc0, 0x90, 0x90, 0x90, 0xff, 0xe0}, 0x1000, 0x1000), "indirect jump");
  // Another symbol starting inside the displaced bytes (hand-written multi-entry code).
  expect_refused(plan_for(straight, 0x1000, 0x1000, {}, {0x1002}), "another symbol");
  // Only at a function's first instruction.
  expect_refused(plan_for(straight, 0x1000, 0x1002), "first instruction");
  // Too short, and displaced instructions that cannot move.
  expect_refused(plan_for({0x31, 0xc0, 0xc3}, 0x1000, 0x1000), "ends before");
  expect_refused(plan_for({0xff, 0xd0, 0x90, 0x90, 0x90, 0xc3}, 0x1000, 0x1000), "icall");
  expect_refused(plan_for({0xe2, 0xfe, 0x90, 0x90, 0x90, 0xc3}, 0x1000, 0x1000), "loop");
  expect_refused(plan_for({0xcc, 0x90, 0x90, 0x90, 0x90, 0xc3}, 0x1000, 0x1000), "interrupt");
}

TEST(JumpPatch, AReturnSiteIsTheInstructionAfterACall) {
  const Bytes f = loop_calling_g(false);
  auto plan = return_site_plan(f, 0x1000, 0x1015);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->length, 6u);  // add rbx,rax; dec r12
  // Not after a call: mid-function bytes stay breakpoints.
  expect_refused(return_site_plan(f, 0x1000, 0x1018), "does not follow a call");
  // A landing pad among the displaced bytes.
  expect_refused(return_site_plan(f, 0x1000, 0x1015, {0x1018}), "landing pad");
  EXPECT_TRUE(return_site_plan(f, 0x1000, 0x1015, {0x1015, 0x1021}));
}

TEST(JumpPatch, BranchesIntoAReturnSitesBytesAreRedirectedWhenTheyHaveARel32) {
  auto plan = return_site_plan(loop_calling_g(false), 0x1000, 0x1015);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->redirects.size(), 1u);
  EXPECT_EQ(plan->redirects[0].branch, 0x1008u);
  EXPECT_EQ(plan->redirects[0].length, 5u);
  EXPECT_EQ(plan->redirects[0].displaced, 1u);
  // A rel8 cannot reach a trampoline: the site stays a breakpoint.
  expect_refused(return_site_plan(loop_calling_g(true), 0x1000, 0x1015), "lands at 0x1018");
}

TEST(JumpPatch, JumpsLeavingTheFunctionMustLeadSomewhereKnown) {
  // f at 0x1000: test edi,edi; jne 0x3000 (rel32); xor eax,eax; ret — the jne leaves f.
  const Bytes f = {0x85, 0xff, 0x0f, 0x85, 0xf8, 0x1f, 0x00, 0x00, 0x31, 0xc0, 0xc3};
  JumpPatchFunction function;
  function.code = {f, 0x1000};
  expect_refused(plan_jump_patch(function, 0x1000), "leaves the function for 0x3000");
  // A tail call: fine.
  function.foreign = [](uint64_t) { return ForeignTarget{ForeignCode::FunctionStart, {}}; };
  EXPECT_TRUE(plan_jump_patch(function, 0x1000));
  // A fragment of f no symbol names (a stripped f.cold), which jumps back into the patched bytes.
  const Bytes cold_back = {0xb8, 0x01, 0, 0, 0, 0xe9, 0xf8, 0xdf, 0xff, 0xff};  // mov eax,1; jmp 0x1002
  function.foreign = [&](uint64_t target) {
    return target == 0x3000 ? ForeignTarget{ForeignCode::Fragment, {cold_back, 0x3000}} : ForeignTarget{};
  };
  expect_refused(plan_jump_patch(function, 0x1000), "lands at 0x1002");
  // The same fragment jumping back past the patched bytes.
  const Bytes cold_after = {0xb8, 0x01, 0, 0, 0, 0xe9, 0xfe, 0xdf, 0xff, 0xff};  // mov eax,1; jmp 0x1008
  function.foreign = [&](uint64_t target) {
    return target == 0x3000 ? ForeignTarget{ForeignCode::Fragment, {cold_after, 0x3000}} : ForeignTarget{};
  };
  EXPECT_TRUE(plan_jump_patch(function, 0x1000));
}

TEST(JumpPatch, TheTrampolineDecodesAndEndsWithTheJumpBack) {
  const Bytes code = {0x48, 0x8d, 0x04, 0x7f, 0x48, 0x03, 0x05, 0x10, 0x00, 0x00, 0x00, 0xc3};  // ...; add rax,[rip+0x10]
  auto plan = plan_for(code, 0x400000, 0x400000);
  ASSERT_TRUE(plan);
  const uint64_t at = 0x500000;
  auto trampoline = build_trampoline(*plan, {at, {0x600000}, 0x510000});
  ASSERT_TRUE(trampoline) << trampoline.error().message;
  const insn::x86::DecoderConfig config{};
  std::vector<insn::x86::X86Insn> decoded;
  for (size_t offset = 0; offset < trampoline->code.size();) {
    insn::x86::X86Insn insn;
    ASSERT_EQ(insn::x86::decode(std::span(trampoline->code).subspan(offset), at + offset, config, insn), insn::x86::DecodeStatus::Ok)
        << "at +" << offset;
    decoded.push_back(insn);
    offset += insn.length;
  }
  ASSERT_GE(decoded.size(), 3u);
  const auto& moved_add = decoded[decoded.size() - 2];
  EXPECT_TRUE(moved_add.rip_relative);
  EXPECT_EQ(moved_add.address + moved_add.length + static_cast<uint64_t>(moved_add.disp), 0x400000u + 11 + 0x10);  // same byte
  EXPECT_EQ(decoded.back().flow, insn::x86::FlowKind::Jmp);
  EXPECT_EQ(decoded.back().rel_target, 0x400000u + 11);
  auto jump = build_jump(0x400000, at);
  ASSERT_TRUE(jump);
  EXPECT_EQ(*jump, (Bytes{0xe9, 0xfb, 0xff, 0x0f, 0x00}));
  EXPECT_FALSE(build_jump(0x400000, 0x400000 + (uint64_t{1} << 32)));
}

// --- running trampolines in this process ---------------------------------------------------

struct AgentCalls {
  int count = 0;
  uint64_t block[20] = {};
  uint64_t descriptor = 0;
};
AgentCalls g_calls;

extern "C" void stand_in_agent(uint64_t descriptor, const uint64_t* block) {
  ++g_calls.count;
  g_calls.descriptor = descriptor;
  std::memcpy(g_calls.block, block, sizeof g_calls.block);
}

// A page within rel32 reach of stand_in_agent, for the functions and their trampolines.
class CodePage {
 public:
  CodePage() {
    const auto agent = reinterpret_cast<uint64_t>(&stand_in_agent);
    for (uint64_t delta = 1 << 24; delta < (uint64_t{1} << 30) && !page_; delta *= 2) {
      void* hint = reinterpret_cast<void*>((agent - delta) & ~uint64_t{0xfff});
      void* got = mmap(hint, kSize, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (got == MAP_FAILED) continue;
      const auto at = reinterpret_cast<uint64_t>(got);
      if ((at > agent ? at - agent : agent - at) < (uint64_t{1} << 30)) page_ = static_cast<uint8_t*>(got);
      else munmap(got, kSize);
    }
  }
  ~CodePage() {
    if (page_) munmap(page_, kSize);
  }
  uint8_t* at(size_t offset) const { return page_ + offset; }
  uint64_t address(size_t offset) const { return reinterpret_cast<uint64_t>(page_ + offset); }
  bool ok() const { return page_ != nullptr; }

  // Copies `code` to `offset`, plans the jump, writes the trampoline at `trampoline_offset`
  // and the jump over the function's first bytes.
  void patch(size_t offset, const Bytes& code, size_t trampoline_offset, uint64_t descriptor) {
    std::memcpy(at(offset), code.data(), code.size());
    auto plan = plan_for(code, address(offset), address(offset));
    ASSERT_TRUE(plan) << plan.error().message;
    auto trampoline = build_trampoline(*plan, {address(trampoline_offset), {descriptor}, reinterpret_cast<uint64_t>(&stand_in_agent)});
    ASSERT_TRUE(trampoline) << trampoline.error().message;
    std::memcpy(at(trampoline_offset), trampoline->code.data(), trampoline->code.size());
    auto jump = build_jump(address(offset), address(trampoline_offset));
    ASSERT_TRUE(jump);
    std::memcpy(at(offset), jump->data(), jump->size());
  }

 private:
  static constexpr size_t kSize = 1 << 16;
  uint8_t* page_ = nullptr;
};

TEST(Trampoline, AReturnSiteWithARedirectedLoopBranchRunsAsTheOriginal) {
  CodePage page;
  ASSERT_TRUE(page.ok());
  const Bytes f = loop_calling_g(false);
  std::memcpy(page.at(0x100), f.data(), f.size());
  std::memcpy(page.at(0x200), kG.data(), kG.size());
  using Fn = long (*)(long);
  const auto fn = reinterpret_cast<Fn>(page.at(0x100));
  ASSERT_EQ(fn(5), 20);
  auto plan = return_site_plan(f, page.address(0x100), page.address(0x115));
  ASSERT_TRUE(plan) << plan.error().message;
  auto trampoline = build_trampoline(*plan, {page.address(0x1000), {0x5e}, reinterpret_cast<uint64_t>(&stand_in_agent)});
  ASSERT_TRUE(trampoline) << trampoline.error().message;
  std::memcpy(page.at(0x1000), trampoline->code.data(), trampoline->code.size());
  ASSERT_EQ(plan->redirects.size(), 1u);
  const BranchRedirect& redirect = plan->redirects[0];
  auto rel32 = build_redirect(redirect, trampoline->displaced_at.at(redirect.displaced));
  ASSERT_TRUE(rel32);
  std::memcpy(reinterpret_cast<uint8_t*>(redirect.branch + redirect.length - 4), rel32->data(), 4);
  auto jump = build_jump(page.address(0x115), page.address(0x1000));
  ASSERT_TRUE(jump);
  std::memcpy(page.at(0x115), jump->data(), jump->size());
  g_calls = {};
  EXPECT_EQ(fn(5), 20);
  EXPECT_EQ(g_calls.count, 4);  // once per return from g, never for the loop's entry jump
  EXPECT_EQ(g_calls.block[16], page.address(0x115));
  EXPECT_EQ(fn(1), 0);
  EXPECT_EQ(g_calls.count, 4);
}

using Fn2 = long (*)(long, long);
using Fn1 = long (*)(long);
constexpr size_t kRdi = 14, kRsi = 13, kRip = 16, kRsp = 19, kRbx = 5, kR12 = 3;

TEST(Trampoline, RunsInFrontOfAFunctionWithARipRelativeOperand) {
  CodePage page;
  ASSERT_TRUE(page.ok());
  const uint64_t constant = 1000;
  std::memcpy(page.at(0x800), &constant, 8);
  // lea rax,[rdi+rsi]; add rax,[rip+disp] (the constant at +0x800); ret
  Bytes f = {0x48, 0x8d, 0x04, 0x37, 0x48, 0x03, 0x05, 0, 0, 0, 0, 0xc3};
  const int32_t disp = 0x800 - (0x100 + 11);
  std::memcpy(f.data() + 7, &disp, 4);
  page.patch(0x100, f, 0x1000, 0xd1);
  g_calls = {};
  const auto fn = reinterpret_cast<Fn2>(page.at(0x100));
  EXPECT_EQ(fn(2, 3), 1005);
  EXPECT_EQ(fn(-7, 3), 996);
  EXPECT_EQ(g_calls.count, 2);
  EXPECT_EQ(g_calls.descriptor, 0xd1u);
  EXPECT_EQ(g_calls.block[kRdi], static_cast<uint64_t>(-7));
  EXPECT_EQ(g_calls.block[kRsi], 3u);
  EXPECT_EQ(g_calls.block[kRip], page.address(0x100));
  EXPECT_EQ(g_calls.block[kRsp] % 16, 8u);  // at a function's entry, after the call pushed
}

TEST(Trampoline, ADisplacedCallReturnsToTheOriginalCode) {
  CodePage page;
  ASSERT_TRUE(page.ok());
  // g at +0x300: lea rax,[rdi+rdi]; ret
  const Bytes g = {0x48, 0x8d, 0x04, 0x3f, 0xc3};
  std::memcpy(page.at(0x300), g.data(), g.size());
  // f at +0x100: push rbx; mov rbx,rdi; call g; add rax,rbx; pop rbx; ret    (3x)
  Bytes f = {0x53, 0x48, 0x89, 0xfb, 0xe8, 0, 0, 0, 0, 0x48, 0x01, 0xd8, 0x5b, 0xc3};
  const int32_t rel = 0x300 - (0x100 + 9);
  std::memcpy(f.data() + 5, &rel, 4);
  page.patch(0x100, f, 0x1000, 1);
  g_calls = {};
  const auto fn = reinterpret_cast<Fn1>(page.at(0x100));
  EXPECT_EQ(fn(14), 42);
  EXPECT_EQ(g_calls.count, 1);
}

TEST(Trampoline, ADisplacedConditionalBranchGoesBothWays) {
  CodePage page;
  ASSERT_TRUE(page.ok());
  // test edi,edi; je +6; mov eax,1; ret; mov eax,2; ret
  const Bytes f = {0x85, 0xff, 0x74, 0x06, 0xb8, 0x01, 0, 0, 0, 0xc3, 0xb8, 0x02, 0, 0, 0, 0xc3};
  page.patch(0x100, f, 0x1000, 1);
  const auto fn = reinterpret_cast<Fn1>(page.at(0x100));
  EXPECT_EQ(fn(0), 2);
  EXPECT_EQ(fn(5), 1);
}

TEST(Trampoline, EveryRegisterAndTheFlagsSurviveTheAgent) {
  CodePage page;
  ASSERT_TRUE(page.ok());
  // f: nop5 (the patched bytes); then sum rdi+rsi+rbx+r12 into rax, keeping CF from the caller's
  // stc/clc in bit 0 via adc: mov rax,0; adc rax,rdi ... (adc reads CF set before the call).
  // 0f 1f 44 00 00        nop5
  // b8 00 00 00 00        mov eax, 0      (flags untouched)
  // 48 11 f8              adc rax, rdi    (rax = rdi + CF)
  // 48 01 f0              add rax, rsi
  // 48 01 d8              add rax, rbx
  // 4c 01 e0              add rax, r12
  // c3
  const Bytes f = {0x0f, 0x1f, 0x44, 0x00, 0x00, 0xb8, 0, 0, 0, 0, 0x48, 0x11, 0xf8, 0x48, 0x01, 0xf0,
                   0x48, 0x01, 0xd8, 0x4c, 0x01, 0xe0, 0xc3};
  page.patch(0x100, f, 0x1000, 7);
  // Call it with CF set and with rbx/r12 holding known values (callee-saved: set and restored
  // around the call in asm, since the compiler owns them otherwise).
  uint64_t result = 0;
  const uint64_t target = page.address(0x100);
  __asm__ volatile(
      "push %%rbx\n\t"
      "push %%r12\n\t"
      "mov $100, %%rbx\n\t"
      "mov $1000, %%r12\n\t"
      "mov $1, %%rdi\n\t"
      "mov $10, %%rsi\n\t"
      "sub $8, %%rsp\n\t"
      "stc\n\t"
      "call *%1\n\t"
      "add $8, %%rsp\n\t"
      "pop %%r12\n\t"
      "pop %%rbx\n\t"
      : "=a"(result)
      : "r"(target)
      : "rdi", "rsi", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc");
  EXPECT_EQ(result, 1u + 1u + 10u + 100u + 1000u);  // CF survived the agent
  EXPECT_EQ(g_calls.block[kRbx], 100u);
  EXPECT_EQ(g_calls.block[kR12], 1000u);
  EXPECT_EQ(g_calls.block[18] & 1, 1u);  // saved flags: CF
}

}  // namespace
}  // namespace xprobe::arch::x86
