// The trap engine on an i386 process (an i386 build of e2e_programs/counter.c): the ProbeArch
// is chosen from the process, every instruction of a function can be probed (out of line or
// emulated in 32-bit mode), return probes read the 4-byte return address and eax, and the slot
// area is mapped below 4 GiB through int 0x80.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <map>

#include "engine_harness.h"
#include "insn/x86/decoder.h"

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;

int reference_fib(int n) { return n < 2 ? n : reference_fib(n - 1) + reference_fib(n - 2); }

std::vector<uint64_t> boundaries32(target::Process& process, uint64_t start, uint64_t size) {
  std::vector<uint8_t> code(size);
  std::vector<uint64_t> boundaries;
  if (!process.read(start, code)) return boundaries;
  insn::x86::DecoderConfig config;
  config.mode = insn::x86::Mode::Protected32;
  for (uint64_t offset = 0; offset < size;) {
    insn::x86::X86Insn insn;
    auto window = std::span<const uint8_t>(code).subspan(offset, std::min<uint64_t>(15, size - offset));
    if (insn::x86::decode(window, start + offset, config, insn) != insn::x86::DecodeStatus::Ok) break;
    boundaries.push_back(start + offset);
    offset += insn.length;
  }
  return boundaries;
}

uint32_t stack_word(const HitContext& hit, uint64_t offset) {
  uint32_t value = 0;
  (void)hit.memory.read(hit.registers.raw.rsp + offset, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&value), 4));
  return value;
}

TEST(I386Engine, EveryInstructionOfAFunctionAndReturnProbesWithCdeclArguments) {
  const std::string program = e2e_program("counter32");
  auto untraced = run_untraced({program, "50"});
  std::map<uint64_t, int> hits_at;
  size_t add_instructions = 0;
  std::vector<std::pair<uint32_t, uint32_t>> add_arguments;
  int fib_returns = 0, fib_mismatches = 0;
  insn::Arch seen = insn::Arch::X86_64;
  auto run = run_traced({program, "50"}, [&](TrapEngine& engine, target::Process& process) {
    seen = engine.arch();
    const uint64_t add = symbol_address(process.pid(), program, "add");
    for (uint64_t address : boundaries32(process, add, symbol_size(program, "add"))) {
      ProbeSpec spec;
      spec.address = address;
      spec.on_hit = [&, address, add](const HitContext& hit) {
        ++hits_at[address];
        if (address == add) add_arguments.push_back({stack_word(hit, 4), stack_word(hit, 8)});
      };
      auto id = engine.add_probe(spec);
      ASSERT_TRUE(id) << id.error().message;
      ++add_instructions;
    }
    ProbeSpec fib;
    fib.address = symbol_address(process.pid(), program, "fib");
    fib.is_return = true;
    fib.save_at_entry = [&](const HitContext& hit) { return std::vector<uint64_t>{stack_word(hit, 4)}; };
    fib.on_return = [&](const ReturnContext& ret) {
      ++fib_returns;
      // eax, as a 64-bit tracer sees it: zero-extended.
      if (ret.hit.registers.raw.rax != static_cast<uint64_t>(reference_fib(static_cast<int>(ret.saved[0]))))
        ++fib_mismatches;
      // The return address was read as 4 bytes: the call site in main, below 4 GiB.
      if (ret.return_address >= (uint64_t{1} << 32)) ++fib_mismatches;
    };
    auto id = engine.add_probe(fib);
    ASSERT_TRUE(id) << id.error().message;
  });
  ASSERT_TRUE(run.launched) << run.error;
  EXPECT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(seen, insn::Arch::I386);
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  ASSERT_GE(add_instructions, 3u);
  ASSERT_EQ(hits_at.size(), add_instructions);  // straight-line code: every instruction runs on every call
  for (const auto& [address, hits] : hits_at) EXPECT_EQ(hits, 50) << std::hex << address;
  ASSERT_EQ(add_arguments.size(), 50u);
  for (uint32_t i = 0; i < 50; ++i) EXPECT_EQ(add_arguments[i], std::make_pair(i, 2 * i));
  EXPECT_EQ(fib_returns, 177);  // calls of fib(10)
  EXPECT_EQ(fib_mismatches, 0);
}

TEST(I386Engine, EveryInstructionOfHotI386LibcFunctions) {
  // 32-bit glibc: PIC thunks (call rel32 + add ebx), ebx-relative PLT/GOT accesses, and system
  // calls through the vDSO as `call *%gs:0x10` (emulated with the gs base ptrace reports).
  const std::string program = e2e_program("counter32");
  auto untraced = run_untraced({program, "30"});
  size_t planted = 0, refused = 0;
  std::string first_refusal;
  std::map<ProbeId, uint64_t> ids;
  std::vector<ProbeId> gs_calls;  // call *%gs:0x10 (65 ff 15 10 00 00 00)
  auto run = run_traced({program, "30"}, [&](TrapEngine& engine, target::Process& process) {
    auto main_break = engine.add_internal_breakpoint(
        symbol_address(process.pid(), program, "main"), [&](const HitContext& hit) {
          const std::string libc = mapped_object(hit.process.pid(), "libc.so");
          for (const char* function : {"puts", "printf", "malloc", "free", "atoi", "write"}) {
            const uint64_t start = symbol_address(hit.process.pid(), libc, function);
            for (uint64_t address : boundaries32(hit.process, start, symbol_size(libc, function))) {
              ProbeSpec spec;
              spec.address = address;
              auto id = engine.add_probe(spec);
              if (id) {
                ++planted;
                ids[*id] = address;
                uint8_t bytes[7] = {};
                const uint8_t gs_call[7] = {0x65, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00};
                // Read past our own int3: the original first byte is the prefix.
                if (hit.process.read(address + 1, std::span<uint8_t>(bytes + 1, 6)) &&
                    std::equal(bytes + 1, bytes + 7, gs_call + 1)) {
                  gs_calls.push_back(*id);
                }
              } else {
                if (first_refusal.empty()) first_refusal = id.error().message;
                ++refused;
              }
            }
          }
        });
    ASSERT_TRUE(main_break) << main_break.error().message;
  }, [&](TrapEngine& engine) {
    uint64_t hits = 0;
    for (const auto& [id, address] : ids) hits += engine.stats(id).hits;
    EXPECT_GT(hits, 50u);
    uint64_t gs_call_hits = 0;
    for (ProbeId id : gs_calls) gs_call_hits += engine.stats(id).hits;
    EXPECT_GT(gs_call_hits, 0u) << gs_calls.size() << " call *%gs:0x10 probed in write";
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_GT(planted, 100u);
  EXPECT_EQ(refused, 0u) << first_refusal;
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

TEST(I386Engine, RemoteMmapInAnI386ProcessGoesThroughInt80AndStaysBelowFourGiB) {
  const std::string program = e2e_program("counter32");
  CapturedStdout captured;
  auto process = target::Process::launch({program, "1"});
  captured.restore();
  ASSERT_TRUE(process) << process.error().message;
  const pid_t tid = (*process)->any_stopped_thread();
  ASSERT_NE(tid, 0);
  const uint64_t four_gib = uint64_t{1} << 32;
  auto mapped = (*process)->remote_mmap_near(tid, 0x56555000, 0x10000, PROT_READ, four_gib, four_gib);
  ASSERT_TRUE(mapped) << mapped.error().message;
  EXPECT_LE(*mapped + 0x10000, four_gib);
  auto maps = (*process)->maps();
  ASSERT_TRUE(maps);
  bool listed = false;
  for (const auto& entry : *maps) listed = listed || (entry.start == *mapped && entry.end == *mapped + 0x10000);
  EXPECT_TRUE(listed) << std::hex << *mapped;
  auto unmapped = (*process)->remote_munmap(tid, *mapped, 0x10000);
  ASSERT_TRUE(unmapped) << unmapped.error().message;
  EXPECT_EQ(*unmapped, 0);
  // Calls without an i386 counterpart here are refused, not run with x86-64 numbers.
  const uint64_t no_args[1] = {0};
  EXPECT_FALSE((*process)->remote_syscall(tid, 39 /* getpid */, no_args));
  (void)(*process)->kill();
}

}  // namespace
}  // namespace xprobe::probe::engine
