// The AArch64 trampoline (arch/arm64/probe_support/trampoline.h) against two oracles:
// aarch64-linux-gnu-objdump reads back every word it writes as the instruction the layout
// says, and Unicorn 2 runs the whole trampoline (the agent a stub whose entry a hook watches)
// next to the displaced instruction run in place: the registers, flags and memory after both
// must be the same, and every call of the agent must see (descriptor, the user_pt_regs block
// of the thread at the probe).
#include <gtest/gtest.h>
#include <unicorn/unicorn.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arch/arm64/probe_support/jump_patch.h"
#include "arch/arm64/probe_support/trampoline.h"
#include "insn/arm64/arm64_insn.h"

namespace xprobe::arch::arm64 {
namespace {

using insn::arm64::decode;

constexpr uint64_t kWindow = 0x10000000;        // the program's code, 4 MiB
constexpr uint64_t kWindowSize = 4 << 20;
constexpr uint64_t kProbe = kWindow + 0x200000;  // the displaced instruction
constexpr uint64_t kFarArea = kWindow + 0x3000000;  // a trampoline 48 MiB away
constexpr uint64_t kNearArea = kWindow + 0x280000;  // one within LDR (literal) reach, in the window
constexpr uint64_t kAreaSize = 1 << 20;
constexpr uint64_t kAgentOffset = 0x80000;
constexpr uint64_t kStack = 0x7f000000;
constexpr uint64_t kStackSize = 0x10000;
constexpr uint64_t kSp = kStack + 0x8000;

int x_register(int n) {
  if (n == 29) return UC_ARM64_REG_X29;
  if (n == 30) return UC_ARM64_REG_X30;
  return UC_ARM64_REG_X0 + n;
}

struct State {
  std::array<uint64_t, 31> x{};
  uint64_t sp = 0, pc = 0, nzcv = 0;
  bool operator==(const State&) const = default;
};

std::string describe(const State& s) {
  std::string out;
  for (int n = 0; n < 31; ++n) out += fmt::format("x{}={:#x} ", n, s.x[n]);
  return out + fmt::format("sp={:#x} pc={:#x} nzcv={:#x}", s.sp, s.pc, s.nzcv);
}

struct AgentCall {
  uint64_t descriptor = 0;
  std::array<uint64_t, 34> block{};
};

class Machine {
 public:
  Machine() {
    check(uc_open(UC_ARCH_ARM64, UC_MODE_ARM, &uc_));
    check(uc_ctl_set_cpu_model(uc_, UC_CPU_ARM64_MAX));
    map(kWindow, kWindowSize);
    map(kFarArea, kAreaSize);
    map(kStack, kStackSize);
    check(uc_hook_add(uc_, &hook_, UC_HOOK_CODE, reinterpret_cast<void*>(&Machine::on_code), this, 1, 0));
  }
  ~Machine() { uc_close(uc_); }

  void map(uint64_t base, uint64_t size) {
    check(uc_mem_map(uc_, base, size, UC_PROT_ALL));
    std::vector<uint8_t> nops(size);
    for (size_t i = 0; i < size; i += 4) std::memcpy(&nops[i], "\x1f\x20\x03\xd5", 4);
    check(uc_mem_write(uc_, base, nops.data(), nops.size()));
  }
  void write(uint64_t address, const void* data, size_t length) {
    check(uc_mem_write(uc_, address, data, length));
    check(uc_ctl_remove_cache(uc_, address, address + length));
  }
  void write_word(uint64_t address, uint32_t word) { write(address, &word, 4); }
  std::vector<uint8_t> read(uint64_t address, size_t length) {
    std::vector<uint8_t> bytes(length);
    check(uc_mem_read(uc_, address, bytes.data(), length));
    return bytes;
  }
  void set(const State& s) {
    for (int n = 0; n < 31; ++n) check(uc_reg_write(uc_, x_register(n), &s.x[n]));
    check(uc_reg_write(uc_, UC_ARM64_REG_SP, &s.sp));
    check(uc_reg_write(uc_, UC_ARM64_REG_NZCV, &s.nzcv));
    check(uc_reg_write(uc_, UC_ARM64_REG_PC, &s.pc));
  }
  State get() {
    State s;
    for (int n = 0; n < 31; ++n) check(uc_reg_read(uc_, x_register(n), &s.x[n]));
    check(uc_reg_read(uc_, UC_ARM64_REG_SP, &s.sp));
    check(uc_reg_read(uc_, UC_ARM64_REG_NZCV, &s.nzcv));
    check(uc_reg_read(uc_, UC_ARM64_REG_PC, &s.pc));
    return s;
  }
  // Runs from s.pc while pc stays in [begin, end) or on the agent stub.
  State run(const State& s, uint64_t begin, uint64_t end, uint64_t agent) {
    set(s);
    agent_ = agent;
    calls.clear();
    uint64_t pc = s.pc;
    for (int steps = 0; steps < 1000 && ((pc >= begin && pc < end) || pc == agent); ++steps) {
      check(uc_emu_start(uc_, pc, 0, 0, 1));
      check(uc_reg_read(uc_, UC_ARM64_REG_PC, &pc));
    }
    return get();
  }

  std::vector<AgentCall> calls;

 private:
  static void on_code(uc_engine* uc, uint64_t address, uint32_t, void* user) {
    auto* self = static_cast<Machine*>(user);
    if (address != self->agent_) return;
    AgentCall call;
    uint64_t block = 0;
    uc_reg_read(uc, UC_ARM64_REG_X0, &call.descriptor);
    uc_reg_read(uc, UC_ARM64_REG_X1, &block);
    uc_mem_read(uc, block, call.block.data(), sizeof call.block);
    self->calls.push_back(call);
  }
  static void check(uc_err err) {
    if (err != UC_ERR_OK) throw std::runtime_error(uc_strerror(err));
  }
  uc_engine* uc_ = nullptr;
  uc_hook hook_ = 0;
  uint64_t agent_ = 0;
};

// Words assembled by aarch64-linux-gnu-as at kProbe.
struct Case {
  const char* what;
  uint32_t word;
};
const std::vector<Case> kCases = {
    {"add x0, x1, x2", 0x8b020020},
    {"stp x29, x30, [sp, #-16]!", 0xa9bf7bfd},
    {"adds x3, x4, x5", 0xab050083},
    {"mrs x6, nzcv", 0xd53b4206},
    {"b .+0x40", 0x14000010},
    {"b .-0x100000", 0x17fc0000},
    {"bl .+0x40", 0x94000010},
    {"b.ne .+0x20", 0x54000101},
    {"b.lt .-0x20", 0x54ffff0b},
    {"cbz x3, .+0x10", 0xb4000083},
    {"cbnz w3, .-0x10", 0x35ffff83},
    {"tbz x5, #40, .+0x8", 0xb6400045},
    {"tbnz w5, #3, .+0x8", 0x37180045},
    {"adr x7, .+0x100", 0x10000807},
    {"adrp x8, .+0x5000", 0xb0000028},
    {"ldr w9, .+0x20", 0x18000109},
    {"ldr x9, .+0x20", 0x58000109},
    {"ldrsw x10, .+0x20", 0x9800010a},
    {"prfm pldl1keep, .+0x20", 0xd8000100},
    {"ldr x11, .-0x80000", 0x58c0000b},
    {"blr x17", 0xd63f0220},
    {"br x16", 0xd61f0200},
    {"ret", 0xd65f03c0},
};

State random_state(std::mt19937_64& random) {
  State s;
  for (auto& reg : s.x) reg = random();
  s.x[16] = kWindow + 0x1000;  // BR/BLR targets: mapped code
  s.x[17] = kWindow + 0x2000;
  s.x[30] = kWindow + 0x3000;  // RET
  s.x[3] = random() % 2 ? 0 : s.x[3];
  s.sp = kSp;
  s.pc = kProbe;
  s.nzcv = (random() & 0xf) << 28;
  return s;
}

TEST(Arm64Trampoline, RunsLikeTheDisplacedInstructionAndHandsTheAgentTheProbedThreadsBlock) {
  Machine machine;
  std::mt19937_64 random(12);
  // Literals the loads read, near the probe.
  for (uint64_t offset = 0; offset < 0x100; offset += 8) {
    const uint64_t value = random();
    machine.write(kProbe + offset, &value, 8);
    machine.write(kProbe - 0x80000 + offset, &value, 8);
  }
  for (const Case& c : kCases) {
    for (uint64_t area : {kFarArea, kNearArea}) {
      for (int round = 0; round < 8; ++round) {
        SCOPED_TRACE(fmt::format("{} with the trampoline at {:#x}, round {}", c.what, area, round));
        const State before = random_state(random);
        std::vector<uint8_t> stack_before = machine.read(kStack, kStackSize);
        machine.write_word(kProbe, c.word);
        const State original = machine.run(before, kProbe, kProbe + 4, 0);
        const std::vector<uint8_t> stack_original = machine.read(kStack, kStackSize);
        machine.write(kStack, stack_before.data(), stack_before.size());

        Arm64JumpPatch patch;
        patch.address = kProbe;
        patch.reported_pc = kProbe;
        patch.displaced = decode(c.word, kProbe);
        const uint64_t agent = area + kAgentOffset;
        machine.write_word(agent, 0xd65f03c0);  // the agent: ret
        const std::vector<uint64_t> descriptors = {area + 0x40000, area + 0x40100};
        auto trampoline = build_trampoline(patch, TrampolineTargets{area, descriptors, agent});
        ASSERT_TRUE(trampoline) << trampoline.error().message;
        ASSERT_EQ(trampoline->displaced_at.size(), 1u);
        machine.write(area, trampoline->code.data(), trampoline->code.size());
        // The B that replaces the instruction, run from the probe.
        auto jump = build_jump(kProbe, area);
        ASSERT_TRUE(jump) << jump.error().message;
        machine.write(kProbe, jump->data(), jump->size());
        State relocated = machine.run(before, kProbe, kProbe + 4, 0);
        EXPECT_EQ(relocated.pc, area);
        relocated = machine.run(relocated, area, area + trampoline->code.size(), agent);
        EXPECT_EQ(relocated, original) << "original:  " << describe(original) << "\nrelocated: " << describe(relocated);
        // Below the sp the trampoline used its frame; the program's stack above it is the same.
        const size_t frame_start = kSp - kStack - kTrampolineFrame;
        const std::vector<uint8_t> stack_relocated = machine.read(kStack, kStackSize);
        EXPECT_TRUE(std::equal(stack_relocated.begin() + frame_start + kTrampolineFrame - 16, stack_relocated.end(),
                               stack_original.begin() + frame_start + kTrampolineFrame - 16));
        machine.write(kStack, stack_before.data(), stack_before.size());

        ASSERT_EQ(machine.calls.size(), descriptors.size());
        for (size_t i = 0; i < descriptors.size(); ++i) {
          const AgentCall& call = machine.calls[i];
          EXPECT_EQ(call.descriptor, descriptors[i]);
          for (int n = 0; n < 31; ++n) EXPECT_EQ(call.block[n], before.x[n]) << "x" << n;
          EXPECT_EQ(call.block[31], before.sp);
          EXPECT_EQ(call.block[32], kProbe);
          EXPECT_EQ(call.block[33], before.nzcv);
        }
      }
    }
  }
}

TEST(Arm64Trampoline, AfterAPaciaspTheAgentSeesTheUnsignedReturnAddressAndTheProgramTheSignedOne) {
  Machine machine;
  std::mt19937_64 random(7);
  constexpr uint32_t kPaciasp = 0xd503233f, kStpPre = 0xa9bf7bfd;
  const uint64_t entry = kProbe - 4;
  machine.write_word(entry, kPaciasp);
  machine.write_word(kProbe, kStpPre);
  const State before = [&] {
    State s = random_state(random);
    s.pc = entry;
    return s;
  }();
  const State original = machine.run(before, entry, kProbe + 4, 0);
  Arm64JumpPatch patch;
  patch.address = kProbe;
  patch.reported_pc = entry;
  patch.displaced = decode(kStpPre, kProbe);
  patch.strip_link_register = true;
  const uint64_t agent = kFarArea + kAgentOffset;
  machine.write_word(agent, 0xd65f03c0);
  auto trampoline = build_trampoline(patch, TrampolineTargets{kFarArea, {kFarArea + 0x40000}, agent});
  ASSERT_TRUE(trampoline) << trampoline.error().message;
  machine.write(kFarArea, trampoline->code.data(), trampoline->code.size());
  auto jump = build_jump(kProbe, kFarArea);
  ASSERT_TRUE(jump);
  machine.write(kProbe, jump->data(), jump->size());
  State relocated = machine.run(before, entry, kProbe + 4, 0);
  ASSERT_EQ(relocated.pc, kFarArea);
  relocated = machine.run(relocated, kFarArea, kFarArea + trampoline->code.size(), agent);
  EXPECT_EQ(relocated, original) << "original:  " << describe(original) << "\nrelocated: " << describe(relocated);
  ASSERT_EQ(machine.calls.size(), 1u);
  EXPECT_EQ(machine.calls[0].block[30], before.x[30]);  // as at the entry, before PACIASP
  EXPECT_EQ(machine.calls[0].block[32], entry);
}

// objdump's reading of the trampoline's words, "mnemonic\toperands" per word.
std::vector<std::pair<uint64_t, std::string>> disassemble(const std::vector<uint8_t>& code, uint64_t base) {
  const std::string path = testing::TempDir() + "/arm64_trampoline.bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(code.data()),
                                              static_cast<std::streamsize>(code.size()));
  const std::string command = fmt::format("aarch64-linux-gnu-objdump -D -b binary -m aarch64 --adjust-vma={:#x} {}", base, path);
  FILE* pipe = popen(command.c_str(), "r");
  std::vector<std::pair<uint64_t, std::string>> lines;
  if (!pipe) return lines;
  const std::regex line(R"(^\s*([0-9a-f]+):\s+[0-9a-f]{8}\s+(\S+)(?:\s+(.*?))?\s*$)");
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) {
    std::cmatch match;
    std::string text(buffer);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (std::regex_match(text.c_str(), match, line))
      lines.emplace_back(std::stoull(match[1].str(), nullptr, 16), match[2].str() + (match[3].length() ? " " + match[3].str() : ""));
  }
  pclose(pipe);
  return lines;
}

TEST(Arm64Trampoline, ObjdumpReadsTheDocumentedLayout) {
  const uint64_t area = kFarArea;
  const uint64_t agent = area + kAgentOffset;
  Arm64JumpPatch patch;
  patch.address = kProbe;
  patch.reported_pc = kProbe;
  patch.displaced = decode(0x54000101, kProbe);  // b.ne .+0x20
  auto trampoline = build_trampoline(patch, TrampolineTargets{area, {0x1111, 0x2222}, agent});
  ASSERT_TRUE(trampoline) << trampoline.error().message;
  const auto lines = disassemble(trampoline->code, area);
  ASSERT_FALSE(lines.empty()) << "aarch64-linux-gnu-objdump gave nothing";

  // The expected text, as the layout in trampoline.h spells it.
  std::vector<std::string> expected = {"sub sp, sp, #0x120"};
  for (int reg = 0; reg < 30; reg += 2)
    expected.push_back(reg == 0 ? "stp x0, x1, [sp]" : fmt::format("stp x{}, x{}, [sp, #{}]", reg, reg + 1, 8 * reg));
  for (const char* text : {"str x30, [sp, #240]", "add x0, sp, #0x120", "str x0, [sp, #248]", "LIT 0", "str x0, [sp, #256]",
                           "mrs x0, nzcv", "str x0, [sp, #264]"})
    expected.push_back(text);
  for (int call = 0; call < 2; ++call) {
    expected.push_back("LIT 0");
    expected.push_back("mov x1, sp");
    expected.push_back(fmt::format("bl 0x{:x}", agent));
  }
  expected.push_back("ldr x0, [sp, #264]");
  expected.push_back("msr nzcv, x0");
  for (int reg = 0; reg < 30; reg += 2)
    expected.push_back(reg == 0 ? "ldp x0, x1, [sp]" : fmt::format("ldp x{}, x{}, [sp, #{}]", reg, reg + 1, 8 * reg));
  expected.push_back("ldr x30, [sp, #240]");
  expected.push_back("add sp, sp, #0x120");
  const uint64_t copy = trampoline->displaced_at[0];
  expected.push_back(fmt::format("b.ne 0x{:x}", copy + 8));
  expected.push_back(fmt::format("b 0x{:x}", kProbe + 4));
  expected.push_back(fmt::format("b 0x{:x}", kProbe + 0x20));
  ASSERT_GE(lines.size(), expected.size());
  std::vector<uint64_t> literal_values;
  auto literal = [&](uint64_t at) {
    uint64_t value = 0;
    std::memcpy(&value, trampoline->code.data() + (at - area), 8);
    return value;
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(fmt::format("word {} at {:#x}", i, lines[i].first));
    std::string got = lines[i].second;
    // binutils prints branch targets bare and tabs between operands: normalise.
    got = std::regex_replace(got, std::regex("\\s*//.*$"), "");  // its comments (b.ne's alias b.any)
    got = std::regex_replace(got, std::regex("\\s+"), " ");
    got = std::regex_replace(got, std::regex("^(b|bl|b\\.ne) ([0-9a-f]+)$"), "$1 0x$2");
    if (expected[i].rfind("LIT ", 0) == 0) {
      std::smatch match;
      ASSERT_TRUE(std::regex_match(got, match, std::regex("ldr x0, 0x([0-9a-f]+)"))) << got;
      literal_values.push_back(literal(std::stoull(match[1].str(), nullptr, 16)));
      continue;
    }
    EXPECT_EQ(got, expected[i]);
  }
  EXPECT_EQ(literal_values, (std::vector<uint64_t>{kProbe, 0x1111, 0x2222}));
  EXPECT_EQ(lines[expected.size() - 3].first, copy);
}

TEST(Arm64Trampoline, RefusesWhatItCannotReach) {
  Arm64JumpPatch patch;
  patch.address = kProbe;
  patch.reported_pc = kProbe;
  patch.displaced = decode(0x14000010, kProbe);  // b .+0x40
  EXPECT_FALSE(build_trampoline(patch, TrampolineTargets{kProbe + (uint64_t{1} << 28), {1}, kProbe + (uint64_t{1} << 28) + 0x1000}));
  EXPECT_FALSE(build_trampoline(patch, TrampolineTargets{kFarArea, {}, kFarArea + 0x1000}));
  EXPECT_FALSE(build_jump(kProbe, kProbe + (uint64_t{1} << 27)));
  EXPECT_TRUE(build_jump(kProbe, kProbe + (uint64_t{1} << 27) - 4));
  EXPECT_FALSE(build_jump(kProbe, kProbe + 2));
  patch.displaced = decode(0x9c000101, kProbe);  // ldr q1, .+0x20: no register for a far literal
  auto far = build_trampoline(patch, TrampolineTargets{kFarArea, {1}, kFarArea + 0x1000});
  ASSERT_FALSE(far);
  EXPECT_NE(far.error().message.find("SIMD&FP"), std::string::npos) << far.error().message;
  EXPECT_TRUE(build_trampoline(patch, TrampolineTargets{kNearArea, {1}, kNearArea + 0x1000}));
}

}  // namespace
}  // namespace xprobe::arch::arm64
