// The in-process agent, run for real in this test process: its machine code (exactly the bytes
// xprobe copies into traced programs) is mapped executable and called as a trampoline calls
// it; what it records is read back with AgentRingReader and replayed. Every value must equal
// what the tracer's own interpreter reads from the same registers and memory. The tests are
// written with x86-64 register names; built for arm64 (the AArch64 VM, tests/arm64_vm) they
// run the arm64 agent with the AAPCS64 registers that play the same parts.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <cctype>
#include <string_view>
#include <utility>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "probe/agent/agent_abi.h"
#include "probe/agent/agent_code.h"
#include "probe/agent_aggregation.h"
#include "probe/agent_capture.h"
#include "probe/agent_ring_reader.h"
#include "probe/arch_registers.h"
#include "probe/definition_parser.h"
#include "probe/fetch_program.h"
#include "probe/filter/agent_filter.h"
#include "probe/filter/event_filter.h"

namespace xprobe::probe {
namespace {

using agent::AgentRingHeader;

// This process's memory through process_vm_readv: a bad address is a failed read.
class SelfMemory final : public MemoryReader {
 public:
  bool read(uint64_t address, std::span<uint8_t> out) override { return read_up_to(address, out) == out.size(); }
  size_t read_up_to(uint64_t address, std::span<uint8_t> out) override {
    size_t done = 0;
    while (done < out.size()) {
      const uint64_t here = address + done;
      const size_t chunk = std::min<size_t>(out.size() - done, 4096 - here % 4096);
      iovec local{out.data() + done, chunk};
      iovec remote{reinterpret_cast<void*>(here), chunk};
      const ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
      if (got <= 0) break;
      done += static_cast<size_t>(got);
      if (static_cast<size_t>(got) < chunk) break;
    }
    return done;
  }
};

class BlockRegisters final : public RegisterView {
 public:
  explicit BlockRegisters(const uint64_t* block) : block_(block) {}
  uint64_t read(RegisterId id) const override { return id < agent::kSavedRegisterWords ? block_[id] : 0; }

 private:
  const uint64_t* block_;
};

#if defined(__aarch64__)
constexpr insn::Arch kHostArch = insn::Arch::AArch64;
// x86-64 name -> the arm64 register in the same role (arguments, return value, pc, flags).
constexpr std::pair<std::string_view, std::string_view> kHostNames[] = {
    {"di", "x0"}, {"si", "x1"}, {"dx", "x2"}, {"cx", "x3"}, {"r8", "x4"}, {"r9", "x5"},
    {"ax", "x0"}, {"ip", "pc"}, {"flags", "pstate"}, {"sp", "sp"}};
#else
constexpr insn::Arch kHostArch = insn::Arch::X86_64;
constexpr std::pair<std::string_view, std::string_view> kHostNames[] = {{"sp", "sp"}};
#endif

std::string_view host_name(std::string_view name) {
  for (const auto& [x86, host] : kHostNames)
    if (x86 == name) return host;
  return name;
}

// `definition` with every %REG spelled for this host.
std::string on_host(const std::string& definition) {
  std::string out;
  for (size_t i = 0; i < definition.size();) {
    if (definition[i] != '%') {
      out += definition[i++];
      continue;
    }
    size_t end = i + 1;
    while (end < definition.size() && std::isalnum(static_cast<unsigned char>(definition[end]))) ++end;
    out += "%" + std::string(host_name(std::string_view(definition).substr(i + 1, end - i - 1)));
    i = end;
  }
  return out;
}

RegisterId reg(const char* name) { return *find_register(probe_abi(kHostArch), host_name(name)); }

class AgentHarness {
 public:
  explicit AgentHarness(uint64_t ring_size) : ring_size_(ring_size) {
    code_ = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::memcpy(code_, agent::kAgentCode, agent::kAgentCodeSize);
    mprotect(code_, 1 << 16, PROT_READ | PROT_EXEC);
    hit_ = reinterpret_cast<void (*)(const void*, const uint64_t*)>(static_cast<uint8_t*>(code_) + agent::kAgentEntryOffset);
    returns_ = static_cast<agent::AgentReturnState*>(
        mmap(nullptr, sizeof(agent::AgentReturnState), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ring_bytes_ = sizeof(AgentRingHeader) + ring_size;
    ring_ = static_cast<AgentRingHeader*>(mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ring_->magic = agent::kRingMagic;
    ring_->ring_size = ring_size;
    ring_->pid = static_cast<uint64_t>(getpid());
    stacks_ = mmap(nullptr, kStacksBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ring_->stacks = reinterpret_cast<uint64_t>(stacks_);
    AgentRingReader::Io io;
    io.read = [](uint64_t at, std::span<uint8_t> out) { return SelfMemory().read(at, out); };
    io.write = [](uint64_t at, std::span<const uint8_t> bytes) {
      std::memcpy(reinterpret_cast<void*>(at), bytes.data(), bytes.size());
      return true;
    };
    reader_ = std::make_unique<AgentRingReader>(std::move(io), reinterpret_cast<uint64_t>(ring_), ring_size);
  }
  ~AgentHarness() {
    munmap(code_, 1 << 16);
    munmap(ring_, ring_bytes_);
    munmap(returns_, sizeof(agent::AgentReturnState));
    munmap(stacks_, kStacksBytes);
  }

  std::vector<uint8_t> descriptor(uint32_t index, const AgentCapture& capture, uint32_t max_active = 4096,
                                  std::span<const uint8_t> filter = {}) const {
    return agent_probe_descriptor(reinterpret_cast<uint64_t>(ring_), index, capture, reinterpret_cast<uint64_t>(returns_),
                                  max_active, filter);
  }
  std::vector<uint8_t> site_descriptor() const {
    return agent_return_site_descriptor(reinterpret_cast<uint64_t>(ring_), reinterpret_cast<uint64_t>(returns_));
  }
  void hit(const std::vector<uint8_t>& descriptor, const uint64_t* block) const { hit_(descriptor.data(), block); }
  // The hit as a trampoline makes it, on a thread whose stack pointer is `sp`.
  void hit_with_stack_at(uint64_t sp, const std::vector<uint8_t>& descriptor, const uint64_t* block) const {
    agent::arch::call_on_stack(sp, reinterpret_cast<void (*)(const void*, const void*)>(hit_), descriptor.data(), block);
  }
  agent::AgentReturnState& returns() { return *returns_; }
  // What the tracer does once it has patched a return site.
  void add_site(uint64_t address) {
    uint32_t at = agent::site_slot_hash(address);
    while (returns_->sites[at] != 0) at = (at + 1) & (agent::kSiteSlots - 1);
    returns_->sites[at] = address;
  }

  struct Drained {
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> records;
    uint64_t lost = 0;
  };
  Drained drain(uint32_t probes) {
    Drained out;
    reader_->drain(
        probes, [&](uint32_t index, std::span<const uint8_t> bytes) { out.records.emplace_back(index, std::vector(bytes.begin(), bytes.end())); },
        [&](uint32_t, uint64_t count) { out.lost += count; });
    return out;
  }
  AgentRingHeader* ring() { return ring_; }
  AgentRingReader& reader() { return *reader_; }

 private:
  static constexpr size_t kStacksBytes = size_t{agent::kAgentStacks} * agent::kAgentStackBytes;
  uint64_t ring_size_;
  size_t ring_bytes_ = 0;
  void* code_ = nullptr;
  void* stacks_ = nullptr;
  AgentRingHeader* ring_ = nullptr;
  agent::AgentReturnState* returns_ = nullptr;
  void (*hit_)(const void*, const uint64_t*) = nullptr;
  std::unique_ptr<AgentRingReader> reader_;
};

ProbeFetchPlan plan_for(const std::string& x86_definition) {
  const std::string definition = on_host(x86_definition);
  auto parsed = parse_definition(definition, ParseOptions{kHostArch});
  EXPECT_TRUE(parsed) << definition << ": " << (parsed ? "" : parsed.error().render());
  return compile_fetch_plan(parsed.value(), kHostArch);
}

// One probe compiled for the agent, with a harness whose ring holds `ring_size` bytes.
struct PreparedProbe {
  PreparedProbe(const std::string& definition, uint64_t ring_size)
      : plan(plan_for(definition)), capture(*compile_agent_capture(plan)), harness(ring_size),
        descriptor(harness.descriptor(0, capture)) {}
  ProbeFetchPlan plan;
  AgentCapture capture;
  AgentHarness harness;
  std::vector<uint8_t> descriptor;
};

std::string show(const FetchedValue& value) {
  std::string out = value.fault ? "fault:" : "ok:";
  for (uint64_t n : value.numbers) out += std::to_string(n) + ",";
  for (const auto& s : value.strings) out += s ? "\"" + *s + "\"," : "(fault),";
  return out;
}

// Runs one hit through the agent and compares the replayed values with the interpreter's.
void expect_same_values(const std::string& definition, const uint64_t* block) {
  const ProbeFetchPlan plan = plan_for(definition);
  auto capture = compile_agent_capture(plan);
  ASSERT_TRUE(capture) << capture.error().message;
  AgentHarness harness(1 << 20);
  harness.hit(harness.descriptor(0, *capture), block);
  auto drained = harness.drain(1);
  ASSERT_EQ(drained.records.size(), 1u);
  EXPECT_EQ(drained.lost, 0u);
  auto record = parse_agent_record(drained.records[0].second, *capture);
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_EQ(record->tid, static_cast<uint64_t>(gettid()));
  const std::vector<FetchedValue> replayed = replay_agent_record(plan, *record, "agent_test");

  BlockRegisters registers(block);
  SelfMemory memory;
  const FetchEnvironment direct{registers, memory, "agent_test", std::nullopt, {}};
  const std::vector<FetchedValue> expected = run_all(plan, direct);
  ASSERT_EQ(replayed.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(show(replayed[i]), show(expected[i])) << "argument " << plan.arguments[i].name << " of " << definition;
}

struct Node {
  uint64_t pad;
  Node* next;
  uint32_t value;
};

TEST(Agent, RecordsWhatTheInterpreterReadsForEveryArgumentKind) {
  static const char text[] = "hello, agent";
  static Node last{0, nullptr, 77};
  static Node first{0, &last, 11};
  static const char* names[2] = {"first name", "second"};
  static uint64_t stack[4] = {0x1111, 0x2222, 0x3333, 0x4444};
  static int32_t global = -5;
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = 42;
  block[reg("si")] = 0xfffffffffffffff0ull;
  block[reg("dx")] = reinterpret_cast<uint64_t>(text);
  block[reg("cx")] = 0x10;  // unmapped: faults
  block[reg("r8")] = reinterpret_cast<uint64_t>(&first);
  block[reg("r9")] = reinterpret_cast<uint64_t>(names);
  block[reg("sp")] = reinterpret_cast<uint64_t>(stack);
  block[reg("ip")] = 0x401000;
  block[reg("flags")] = 0x246;
  char at_global[32];
  std::snprintf(at_global, sizeof at_global, "@0x%lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(&global)));
  const std::string definition = std::string("p:g/e work a=%di:s64 b=%si:x32 c=%si:s8 s=+0(%dx):string bad=+0(%cx):string ") +
                                 "badnum=+8(%cx):u64 n=+16(+8(%r8)):u32 n1=+16(%r8):u32 arr=+0(%sp):x64[3] st=$stack2 " +
                                 "names=+0(%r9):string[2] g=" + at_global + ":s32 imm=\\7 str=\\\"lit\" cm=$comm " +
                                 "ip=%ip flags=%flags u=+0(%dx):ustring ch=+1(%dx):char bits=+0(%dx):b4@2/8";
  expect_same_values(definition, block);
}

TEST(Agent, MemoryTheTracerCallsAlwaysReadableIsReadTheSame) {
  // A string inside a readable range, one running out of it (the rest read with
  // process_vm_readv) and a fault past it: the same values as the interpreter's.
  static char area[8192];
  std::memset(area, 'q', sizeof area);
  std::strcpy(area + 100, "inside the range");
  area[4095 - 3] = 'e';
  area[4095 - 2] = 'n';
  area[4095 - 1] = 'd';
  area[4095] = 'x';  // crosses the range's end at 4096
  area[4100] = 0;
  const char* definition = "p:g/e work a=+0(%di):string b=+0(%si):string c=+0(%dx):u64 d=+0(%cx):string";
  const ProbeFetchPlan plan = plan_for(definition);
  auto capture = compile_agent_capture(plan);
  ASSERT_TRUE(capture);
  AgentHarness harness(1 << 20);
  harness.ring()->readable_count = 1;
  harness.ring()->readable[0] = {reinterpret_cast<uint64_t>(area), reinterpret_cast<uint64_t>(area) + 4096};
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = reinterpret_cast<uint64_t>(area + 100);
  block[reg("si")] = reinterpret_cast<uint64_t>(area + 4092);
  block[reg("dx")] = reinterpret_cast<uint64_t>(area + 8);
  block[reg("cx")] = 0x10;
  harness.hit(harness.descriptor(0, *capture), block);
  auto drained = harness.drain(1);
  ASSERT_EQ(drained.records.size(), 1u);
  auto record = parse_agent_record(drained.records[0].second, *capture);
  ASSERT_TRUE(record);
  const auto replayed = replay_agent_record(plan, *record, "agent_test");
  BlockRegisters registers(block);
  SelfMemory memory;
  const auto expected = run_all(plan, FetchEnvironment{registers, memory, "agent_test", std::nullopt, {}});
  ASSERT_EQ(replayed.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(show(replayed[i]), show(expected[i])) << i;
  EXPECT_EQ(show(replayed[0]), "ok:\"inside the range\",");
  EXPECT_EQ(show(replayed[1]), "ok:\"endxqqqq\",");
}

TEST(Agent, LongStringsTakeTheUnstagedPathAndAreCutAsTheKernelCuts) {
  for (size_t length : {100u, 500u, 3000u, 4095u, 4096u, 6000u}) {
    std::string text(length, 'x');
    for (size_t i = 0; i < length; ++i) text[i] = static_cast<char>('a' + i % 26);
    uint64_t block[agent::kSavedRegisterWords] = {};
    block[reg("di")] = reinterpret_cast<uint64_t>(text.c_str());
    expect_same_values("p:g/e work s=+0(%di):string n=%di:u64", block);
  }
}

TEST(Agent, StringRunningIntoAnUnmappedPageFaults) {
  const long page = sysconf(_SC_PAGESIZE);
  auto* two = static_cast<char*>(mmap(nullptr, 2 * static_cast<size_t>(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  munmap(two + page, static_cast<size_t>(page));
  std::memset(two, 'z', static_cast<size_t>(page));  // no NUL before the hole
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = reinterpret_cast<uint64_t>(two + page - 10);
  expect_same_values("p:g/e work s=+0(%di):string", block);
  munmap(two, static_cast<size_t>(page));
}

TEST(Agent, AFullRingCountsEveryHitItCouldNotRecord) {
  PreparedProbe prepared("p:g/e work a=%di:u64 s=+0(%si):string", 64 << 10);
  auto& [plan, capture, harness, descriptor] = prepared;
  static const char text[] = "ring";
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("si")] = reinterpret_cast<uint64_t>(text);
  constexpr uint64_t kHits = 5000;
  uint64_t recorded = 0, lost = 0, expected_next = 0;
  for (uint64_t i = 0; i < kHits; ++i) {
    block[reg("di")] = i;
    harness.hit(descriptor, block);
    if (i % 1500 == 1499) {  // drain now and then: the ring fills between drains
      auto drained = harness.drain(1);
      lost += drained.lost;
      for (auto& [index, bytes] : drained.records) {
        auto record = parse_agent_record(bytes, capture);
        ASSERT_TRUE(record);
        EXPECT_GE(record->registers[reg("di")], expected_next);  // in order, gaps only where dropped
        expected_next = record->registers[reg("di")] + 1;
        ++recorded;
      }
    }
  }
  auto drained = harness.drain(1);
  recorded += drained.records.size();
  lost += drained.lost;
  EXPECT_GT(lost, 0u);
  EXPECT_GT(recorded, 0u);
  EXPECT_EQ(recorded + lost, kHits);
}

TEST(Agent, TheReaderReportsHowFullTheRingWas) {
  PreparedProbe prepared("p:g/e work a=%di:u64", 64 << 10);
  auto& [plan, capture, harness, descriptor] = prepared;
  uint64_t block[agent::kSavedRegisterWords] = {};
  (void)harness.drain(1);
  EXPECT_EQ(harness.reader().last_fill(), 0.0);
  for (int i = 0; i < 256; ++i) harness.hit(descriptor, block);  // 256 records of 48 bytes: 12 KiB of 64
  (void)harness.drain(1);
  EXPECT_NEAR(harness.reader().last_fill(), 256.0 * 48 / (64 << 10), 1e-9);
  (void)harness.drain(1);
  EXPECT_EQ(harness.reader().last_fill(), 0.0);  // all freed by the drain before
}

TEST(Agent, ManyThreadsRecordConcurrentlyWithoutLosingOrTearingARecord) {
  PreparedProbe prepared("p:g/e work seq=%di:u64 thread=%si:u64", 256 << 10);
  auto& [plan, capture, harness, descriptor] = prepared;
  constexpr int kThreads = 4;
  constexpr uint64_t kHitsPerThread = 20000;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t block[agent::kSavedRegisterWords] = {};
      block[reg("si")] = static_cast<uint64_t>(t);
      for (uint64_t i = 0; i < kHitsPerThread; ++i) {
        block[reg("di")] = i;
        harness.hit(descriptor, block);
      }
      running.fetch_sub(1);
    });
  }
  std::vector<uint64_t> next(kThreads, 0);
  uint64_t recorded = 0, lost = 0;
  auto consume = [&](AgentHarness::Drained drained) {
    lost += drained.lost;
    for (auto& [index, bytes] : drained.records) {
      auto record = parse_agent_record(bytes, capture);
      ASSERT_TRUE(record) << record.error().message;
      const uint64_t thread = record->registers[reg("si")];
      ASSERT_LT(thread, static_cast<uint64_t>(kThreads));
      EXPECT_GE(record->registers[reg("di")], next[thread]);
      next[thread] = record->registers[reg("di")] + 1;
      ++recorded;
    }
  };
  while (running.load() > 0) consume(harness.drain(1));
  for (auto& thread : threads) thread.join();
  consume(harness.drain(1));
  EXPECT_EQ(harness.ring()->tail, harness.ring()->head);
  EXPECT_EQ(recorded + lost, kThreads * kHitsPerThread);
  EXPECT_GT(recorded, 0u);
}

TEST(Agent, AnUnfinishedRecordHoldsTheSpaceButNotTheRecordsBehindIt) {
  PreparedProbe prepared("p:g/e work a=%di:u64", 64 << 10);
  auto& [plan, capture, harness, descriptor] = prepared;
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = 1;
  harness.hit(descriptor, block);
  // What a thread stopped between reservation and commit leaves: a reserved header (its
  // body not written yet). Then one more complete record behind it.
  auto* ring = harness.ring();
  const uint64_t stuck_at = ring->head;
  auto* words = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(ring + 1) + stuck_at);
  const uint64_t stuck_length = 8 * agent::kRecordFixedWords + 8;  // 48: a multiple of 16
  ring->head = stuck_at + stuck_length;
  words[1] = stuck_at;
  words[0] = stuck_length;  // probe 0, not committed
  block[reg("di")] = 3;
  harness.hit(descriptor, block);

  auto values = [&](const AgentHarness::Drained& drained) {
    std::vector<uint64_t> out;
    for (const auto& [index, bytes] : drained.records) out.push_back(parse_agent_record(bytes, capture)->registers[reg("di")]);
    return out;
  };
  EXPECT_EQ(values(harness.drain(1)), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(ring->tail, stuck_at);  // freed up to the unfinished record only
  EXPECT_TRUE(values(harness.drain(1)).empty());  // nothing handed over twice
  // The thread finishes its record: handed over, and everything is freed.
  words[2] = static_cast<uint64_t>(gettid());
  words[agent::kRecordFixedWords] = 2;
  words[0] = agent::kCommitted | stuck_length;
  EXPECT_EQ(values(harness.drain(1)), (std::vector<uint64_t>{2}));
  EXPECT_EQ(ring->tail, ring->head);
  uint64_t lost = 0;
  harness.reader().abandon_unfinished([&](uint32_t, uint64_t n) { lost += n; });
  EXPECT_EQ(lost, 0u);

  // One that is never finished is counted when the reader gives up on it.
  const uint64_t second = ring->head;
  auto* never = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(ring + 1) + second);
  ring->head = second + stuck_length;
  never[1] = second;
  never[0] = stuck_length;
  EXPECT_TRUE(values(harness.drain(1)).empty());
  harness.reader().abandon_unfinished([&](uint32_t, uint64_t n) { lost += n; });
  EXPECT_EQ(lost, 1u);
}

TEST(Agent, WhatTheProgramScribblesOverTheRingIsNeverBelieved) {
  PreparedProbe prepared("p:g/e work a=%di:u64 s=+0(%si):string", 64 << 10);
  auto& [plan, capture, harness, descriptor] = prepared;
  uint64_t block[agent::kSavedRegisterWords] = {};
  static const char text[] = "fine";
  block[reg("si")] = reinterpret_cast<uint64_t>(text);
  for (int i = 0; i < 20; ++i) harness.hit(descriptor, block);
  // Flip bytes all over the records: every record either parses and stays inside its bytes,
  // or is refused; the reader never reads past what it was given.
  auto* data = reinterpret_cast<uint8_t*>(harness.ring() + 1);
  uint32_t seed = 12345;
  for (int i = 0; i < 200; ++i) {
    seed = seed * 1103515245u + 12345u;
    data[(seed >> 8) % harness.ring()->head] ^= static_cast<uint8_t>(seed >> 24);
  }
  auto drained = harness.drain(1);
  for (auto& [index, bytes] : drained.records) {
    auto record = parse_agent_record(bytes, capture);
    if (!record) continue;
    for (const auto& chunk : record->chunks) {
      EXPECT_GE(chunk.bytes.data(), bytes.data());
      EXPECT_LE(chunk.bytes.data() + chunk.bytes.size(), bytes.data() + bytes.size());
    }
    (void)replay_agent_record(plan, *record, "x");
  }
  SUCCEED();
}

TEST(Agent, ArgumentsOnlyTheTracerCanFetchAreRefused) {
  auto ret = parse_definition("r:g/e work a=$arg1", ParseOptions{kHostArch});
  ASSERT_TRUE(ret);
  // Saved arguments exist only for a return probe's capture, and a frame holds 8 of them.
  EXPECT_FALSE(compile_agent_capture(compile_fetch_plan(ret.value(), kHostArch)));
  EXPECT_TRUE(compile_agent_capture(compile_fetch_plan(ret.value(), kHostArch), true));
  auto ninth = parse_definition("r:g/e work a=$arg9", ParseOptions{kHostArch});
  ASSERT_TRUE(ninth);
  EXPECT_FALSE(compile_agent_capture(compile_fetch_plan(ninth.value(), kHostArch), true));
  if (kHostArch == insn::Arch::X86_64) {
    EXPECT_FALSE(compile_agent_capture(plan_for("p:g/e work cs=%cs")));
  }
  EXPECT_FALSE(compile_agent_capture(plan_for("p:g/e work s=+0(%di):string[17]")));
  EXPECT_TRUE(compile_agent_capture(plan_for("p:g/e work s=+0(%di):string[16]")));
}

// --- return probes -------------------------------------------------------------------------

struct ReturnProbe {
  explicit ReturnProbe(const std::string& definition, uint32_t max_active = 4096)
      : plan(plan_for(definition)), capture(*compile_agent_capture(plan, true)), harness(1 << 20),
        descriptor(harness.descriptor(0, capture, max_active)), site(harness.site_descriptor()) {}
  // A call of the probed function: `stack_slot` is where the call put the return address
  // (x86-64; on AArch64 it is in x30 and sp points at the slot).
  void enter(uint64_t* stack_slot, uint64_t return_address, std::vector<std::pair<const char*, uint64_t>> regs) {
    uint64_t block[agent::kSavedRegisterWords] = {};
#if defined(__aarch64__)
    block[30] = return_address;
    *stack_slot = ~return_address;  // not where AArch64 keeps it
#else
    *stack_slot = return_address;
#endif
    for (const auto& [name, value] : regs) block[reg(name)] = value;
    block[agent::arch::kGoroutineWord] = goroutine;
    block[reg("sp")] = reinterpret_cast<uint64_t>(stack_slot);
    block[reg("ip")] = 0x401000;
    BlockRegisters registers(block);
    SelfMemory memory;
    entries.push_back(capture_entry_arguments(plan, registers, memory));
    harness.hit(descriptor, block);
  }
  size_t pending(uint64_t address) {
    size_t n = 0;
    for (uint64_t entry : harness.returns().pending) n += entry == address;
    return n;
  }
  // The return executed: at `return_address` with the return address's slot popped (x86-64;
  // AArch64 returns with sp as at the entry).
  void leave(uint64_t* stack_slot, uint64_t return_address, uint64_t rax) {
    uint64_t block[agent::kSavedRegisterWords] = {};
    block[reg("ax")] = rax;
    block[agent::arch::kGoroutineWord] = goroutine;
    block[reg("sp")] = reinterpret_cast<uint64_t>(stack_slot) + agent::kShortestRetPop;
    block[reg("ip")] = return_address;
    std::memcpy(last_return, block, sizeof block);
    harness.hit(site, block);
  }
  agent::AgentProbeCounters& counters() { return harness.returns().counters[0]; }

  ProbeFetchPlan plan;
  AgentCapture capture;
  AgentHarness harness;
  std::vector<uint8_t> descriptor, site;
  std::vector<std::vector<uint64_t>> entries;  // what the tracer's interpreter saves at each entry
  uint64_t last_return[agent::kSavedRegisterWords] = {};
  uint64_t goroutine = 0;  // the g register's value at entries and returns
};

TEST(AgentReturns, NestedCallsReturnInOrderWithTheArgumentsSavedAtTheirEntry) {
  static const char outer_text[] = "outer", inner_text[] = "inner";
  ReturnProbe probe("r:g/e work ret=$retval:s64 a=$arg1:s64 s=+0($arg2):string");
  uint64_t stack[64] = {};
  const uint64_t site = 0x401234;
  // The first call from a site the agent does not know asks the tracer: with the request
  // signal blocked (as a program may), through the pending list.
  sigset_t request, before;
  sigemptyset(&request);
  sigaddset(&request, agent::kRequestSignal);
  pthread_sigmask(SIG_BLOCK, &request, &before);
  probe.enter(&stack[40], site, {{"di", 1}, {"si", reinterpret_cast<uint64_t>(outer_text)}});
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  EXPECT_EQ(probe.pending(site), 1u);
  probe.harness.add_site(site);
  probe.enter(&stack[20], site, {{"di", 2}, {"si", reinterpret_cast<uint64_t>(inner_text)}});
  EXPECT_EQ(probe.pending(site), 1u);
  EXPECT_EQ(probe.counters().active, 2u);

  probe.leave(&stack[20], site, 20);
  uint64_t inner_return[agent::kSavedRegisterWords];
  std::memcpy(inner_return, probe.last_return, sizeof inner_return);
  probe.leave(&stack[40], site, 10);
  EXPECT_EQ(probe.counters().active, 0u);
  EXPECT_EQ(probe.counters().discarded, 0u);

  auto drained = probe.harness.drain(1);
  ASSERT_EQ(drained.records.size(), 2u);
  SelfMemory memory;
  const uint64_t* returns[2] = {inner_return, probe.last_return};
  const std::vector<uint64_t>* saved[2] = {&probe.entries[1], &probe.entries[0]};
  for (size_t i = 0; i < 2; ++i) {
    auto record = parse_agent_record(drained.records[i].second, probe.capture);
    ASSERT_TRUE(record) << record.error().message;
    EXPECT_EQ(record->return_address, site);
    EXPECT_EQ(record->saved, *saved[i]);
    const auto replayed = replay_agent_record(probe.plan, *record, "agent_test");
    BlockRegisters registers(returns[i]);
    const FetchEnvironment direct{registers, memory, "agent_test", site, *saved[i]};
    const auto expected = run_all(probe.plan, direct);
    ASSERT_EQ(replayed.size(), expected.size());
    for (size_t a = 0; a < expected.size(); ++a) EXPECT_EQ(show(replayed[a]), show(expected[a])) << i << "/" << a;
  }
  auto inner = parse_agent_record(drained.records[0].second, probe.capture);
  EXPECT_EQ(show(replay_agent_record(probe.plan, *inner, "agent_test")[2]), "ok:\"inner\",");
}

TEST(AgentReturns, FramesUnwoundPastAreDiscardedAndOnlyTheReturningOneIsRecorded) {
  ReturnProbe probe("r:g/e work ret=$retval:s64");
  uint64_t stack[64] = {};
  const uint64_t site = 0x401234, other_site = 0x405678;
  probe.harness.add_site(site);
  probe.harness.add_site(other_site);
  probe.enter(&stack[40], site, {});
  probe.enter(&stack[30], other_site, {});
  probe.enter(&stack[20], other_site, {});
  // longjmp from the innermost call back into the outer function, which then returns.
  probe.leave(&stack[40], site, 7);
  EXPECT_EQ(probe.counters().discarded, 2u);
  EXPECT_EQ(probe.counters().active, 0u);
  // A new call at the depth of a frame that never returned replaces it.
  probe.enter(&stack[40], site, {});
  probe.enter(&stack[40], site, {});
  EXPECT_EQ(probe.counters().discarded, 3u);
  // Code reached at a site without a frame returning there (a jump to it, a wrong guess)
  // records nothing and throws the frame away.
  probe.leave(&stack[40], other_site, 9);
  EXPECT_EQ(probe.counters().discarded, 4u);
  auto drained = probe.harness.drain(1);
  ASSERT_EQ(drained.records.size(), 1u);
  auto record = parse_agent_record(drained.records[0].second, probe.capture);
  ASSERT_TRUE(record);
  EXPECT_EQ(show(replay_agent_record(probe.plan, *record, "agent_test")[0]), "ok:7,");
}

TEST(AgentReturns, WithoutATracerTheRequestSignalGoesUnnoticed) {
  // No tracer here: the agent's request signal meets its default action, ignore. This process
  // must run on, and the request word is clear again.
  ReturnProbe probe("r:g/e work ret=$retval:s64");
  uint64_t stack[64] = {};
  probe.enter(&stack[40], 0x401234, {});
  EXPECT_EQ(probe.pending(0x401234), 0u);
  size_t requests = 0;
  for (const auto& slot : probe.harness.returns().threads) requests += slot.request != 0;
  EXPECT_EQ(requests, 0u);
  EXPECT_EQ(probe.counters().active, 1u);
}

TEST(AgentReturns, MaxActiveAndTheFrameLimitCountMisses) {
  ReturnProbe limited("r2:g/e work ret=$retval", 2);
  uint64_t stack[256] = {};
  const uint64_t site = 0x401234;
  limited.harness.add_site(site);
  for (int depth = 0; depth < 3; ++depth) limited.enter(&stack[200 - depth * 4], site, {});
  EXPECT_EQ(limited.counters().active, 2u);
  EXPECT_EQ(limited.counters().missed, 1u);

  ReturnProbe deep("r:g/e work ret=$retval");
  deep.harness.add_site(site);
  for (uint32_t depth = 0; depth < agent::kMaxFrames + 3; ++depth) deep.enter(&stack[250 - depth * 3], site, {});
  EXPECT_EQ(deep.counters().active, agent::kMaxFrames);
  EXPECT_EQ(deep.counters().missed, 3u);
}

TEST(AgentReturns, EachThreadHasItsOwnFrames) {
  ReturnProbe probe("r:g/e work ret=$retval:s64");
  const uint64_t site = 0x401234;
  probe.harness.add_site(site);
  constexpr int kThreads = 4, kCalls = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&probe, t] {
      std::vector<uint64_t> stack(64);
      for (int i = 0; i < kCalls; ++i) {
        stack[30] = site;
        uint64_t block[agent::kSavedRegisterWords] = {};
#if defined(__aarch64__)
        block[30] = site;
#endif
        block[reg("sp")] = reinterpret_cast<uint64_t>(&stack[30]);
        probe.harness.hit(probe.descriptor, block);
        block[reg("sp")] += agent::kShortestRetPop;
        block[reg("ip")] = site;
        block[reg("ax")] = static_cast<uint64_t>(t);
        probe.harness.hit(probe.site, block);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  auto drained = probe.harness.drain(1);
  EXPECT_EQ(drained.records.size(), static_cast<size_t>(kThreads * kCalls));
  EXPECT_EQ(probe.counters().active, 0u);
  EXPECT_EQ(probe.counters().discarded, 0u);
  int claimed = 0;
  for (const auto& slot : probe.harness.returns().threads) claimed += slot.tid != 0;
  EXPECT_EQ(claimed, kThreads);
}


}  // namespace
}  // namespace xprobe::probe

namespace xprobe::probe {
namespace {

// The agent's filter against the tracer's (itself checked against the kernel's): on hits of
// every kind of value, a hit is recorded exactly when the filter holds; the ones it turns away
// touch no ring byte and are counted.
TEST(AgentFilter, RecordsExactlyTheHitsTheTracersFilterLetsThrough) {
  const std::string definition =
      "p:g/e work n=%di:s64 u=%si:u32 w=%si:s16 s=+0(%dx):string m=+0(%cx):u16 bits=+0(%cx):b3@2/8 arr=+0(%cx):u8[2]";
  const ProbeFetchPlan plan = plan_for(definition);
  auto parsed = parse_definition(on_host(definition), ParseOptions{kHostArch});
  ASSERT_TRUE(parsed);
  std::vector<std::string> names;
  std::vector<FetchType> types;
  for (const ProbeArgument& argument : parsed->arguments) {
    names.push_back(argument.name);
    types.push_back(argument.type);
  }
  const std::vector<std::string> filters = {
      "n < 0 && u & 1",
      "s ~ \"al*\" || w < -100",
      "!(s == \"beta\" || s ~ \"*ta\") && n >= -50",
      "s ~ \"?e[l-t]*\" || m > 30000",
      "bits == 5 || arr == 0x0102 && u != 7",
      "cpu >= 0 && __probe_ip == 0x401000 && n != -93",
      "__probe_ip != 0x401000 || common_flags != 0",  // false for every hit, decided when compiled
  };
  static const char* const kNames[] = {"alpha", "beta", "gamma", "delta", "zeta", "alphabet", "beta-max", "left"};
  static uint8_t memory_words[8][2];
  for (const std::string& text : filters) {
    auto filter = filter::parse_event_filter(text, filter::event_fields(names, types, false));
    ASSERT_TRUE(filter) << filter.error().render();
    const std::vector<uint8_t> compiled = filter::compile_agent_filter(filter.value(), plan, 0x401000);
    ASSERT_FALSE(compiled.empty()) << text;
    auto capture = compile_agent_capture(plan);
    ASSERT_TRUE(capture);
    AgentHarness harness(1 << 20);
    const std::vector<uint8_t> descriptor = harness.descriptor(0, *capture, 4096, compiled);
    size_t expected_records = 0;
    for (int i = 0; i < 64; ++i) {
      uint64_t block[agent::kSavedRegisterWords] = {};
      memory_words[i % 8][0] = static_cast<uint8_t>(i * 37);
      memory_words[i % 8][1] = static_cast<uint8_t>(i * 11 + 1);
      block[reg("di")] = static_cast<uint64_t>(i * 7 - 100);
      block[reg("si")] = static_cast<uint64_t>(i) * 2654435761ull;
      block[reg("dx")] = reinterpret_cast<uint64_t>(kNames[(i * 5) % 8]);
      block[reg("cx")] = reinterpret_cast<uint64_t>(memory_words[i % 8]);
      const uint64_t head_before = harness.ring()->head;
      harness.hit(descriptor, block);
      BlockRegisters registers(block);
      SelfMemory memory;
      const std::vector<FetchedValue> values = run_all(plan, FetchEnvironment{registers, memory, "agent_test", std::nullopt, {}});
      filter::FilterInputs inputs;
      inputs.values = values;
      inputs.probe_address = 0x401000;
      const bool passes = filter.value().matches(inputs);
      expected_records += passes ? 1 : 0;
      // A hit the filter turns away leaves the ring as it was.
      if (!passes) {
        EXPECT_EQ(harness.ring()->head, head_before) << text << ", hit " << i;
      } else {
        EXPECT_GT(harness.ring()->head, head_before) << text << ", hit " << i;
      }
      auto drained = harness.drain(1);
      ASSERT_EQ(drained.records.size(), passes ? 1u : 0u) << text << ", hit " << i;
    }
    EXPECT_EQ(harness.ring()->filtered[0], 64u - expected_records) << text;
    // Each filter but the last (false by construction) lets some through and holds some back.
    if (text.find("common_flags") == std::string::npos) {
      EXPECT_GT(expected_records, 0u) << text << " lets nothing through: the test would prove nothing";
      EXPECT_LT(expected_records, 64u) << text;
    } else {
      EXPECT_EQ(expected_records, 0u) << text;
    }
  }
}

// What the agent cannot see (the thread's name) is left to the tracer: such a hit is recorded.
TEST(AgentFilter, TermsOnlyTheTracerCanDecideNeverTurnAHitAway) {
  const std::string definition = "p:g/e work n=%di:s64";
  const ProbeFetchPlan plan = plan_for(definition);
  const std::vector<std::string> names{"n"};
  const std::vector<FetchType> types{*fetch_type_named("s64", 8)};
  auto filter = filter::parse_event_filter("comm == \"nobody\" && n > 5", filter::event_fields(names, types, false));
  ASSERT_TRUE(filter);
  const std::vector<uint8_t> compiled = filter::compile_agent_filter(filter.value(), plan, 0);
  auto capture = compile_agent_capture(plan);
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> descriptor = harness.descriptor(0, *capture, 4096, compiled);
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = 9;  // n > 5 holds; comm is unknown to the agent: recorded
  harness.hit(descriptor, block);
  block[reg("di")] = 2;  // n > 5 fails: false whatever comm is
  harness.hit(descriptor, block);
  EXPECT_EQ(harness.drain(1).records.size(), 1u);
  EXPECT_EQ(harness.ring()->filtered[0], 1u);
}


// --- aggregations in the agent ------------------------------------------------------------

// A pair of tables in this process's memory, as the jump engine maps one in a traced program,
// read by the tracer's reader.
class TestTable {
 public:
  explicit TestTable(uint32_t max_entries, std::vector<uint8_t> folds = {})
      : bytes_(agent::agg_pair_bytes(max_entries)),
        memory_(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)),
        reader_(reinterpret_cast<uint64_t>(memory_), max_entries, std::move(folds)) {
    const agent::AgentAggTableHeader header = agent_table_header(max_entries, 1.0);
    for (uint64_t t = 0; t < 2; ++t)
      std::memcpy(static_cast<uint8_t*>(memory_) + agent::agg_pair_table_offset(max_entries, t), &header, sizeof header);
    const agent::AgentAggTablePair pair = agent_pair_header(max_entries);
    std::memcpy(memory_, &pair, sizeof pair);
  }
  ~TestTable() { munmap(memory_, bytes_); }
  TestTable(const TestTable&) = delete;
  TestTable& operator=(const TestTable&) = delete;
  uint64_t address() const { return reinterpret_cast<uint64_t>(memory_); }
  agent::AgentAggTablePair& pair() { return *static_cast<agent::AgentAggTablePair*>(memory_); }
  agent::AgentAggTableHeader& header(uint64_t t) {
    return *reinterpret_cast<agent::AgentAggTableHeader*>(static_cast<uint8_t*>(memory_) +
                                                          agent::agg_pair_table_offset(reader_.max_entries(), t));
  }
  // What the tables took since the last read, through the tracer's reader. None: an agent was
  // still folding into the table left.
  Result<std::optional<AggregationUpdate>> collect(bool final = false) {
    const AggregationMemory memory{[](uint64_t at, std::span<uint8_t> into) {
                                     std::memcpy(into.data(), reinterpret_cast<const void*>(at), into.size());
                                     return true;
                                   },
                                   [](uint64_t at, std::span<const uint8_t> bytes) {
                                     std::memcpy(reinterpret_cast<void*>(at), bytes.data(), bytes.size());
                                     return true;
                                   }};
    return reader_.collect(memory, final);
  }
  Result<AggregationUpdate> read() {
    auto taken = collect();
    if (!taken) return taken.error();
    if (!taken->has_value()) return make_error("an agent is still in the table");
    return std::move(**taken);
  }

 private:
  size_t bytes_;
  void* memory_;
  AgentTablePairReader reader_;
};

// The descriptor of `capture`'s probe whose agent folds every hit into `table` as `spec` says.
std::vector<uint8_t> folding_descriptor(AgentHarness& harness, const AgentCapture& capture, const AgentAggregationSpec& spec,
                                        const TestTable& table) {
  const std::vector<AgentAggregationSpec> specs{spec};
  const std::vector<uint64_t> tables{table.address()};
  return agent_probe_descriptor(reinterpret_cast<uint64_t>(harness.ring()), 0, capture, 0, 0, {},
                                agent_aggregations_block(specs, tables));
}

agent::AgentAggValue argument_part(uint8_t source, uint8_t argument, uint8_t size, bool is_signed) {
  agent::AgentAggValue part{};
  part.source = source;
  part.argument = argument;
  part.size = size;
  part.flags = is_signed ? agent::kFilterSigned : 0;
  return part;
}

std::string string_key(const AggregatedEntry& entry) {
  char text[agent::kAggStringBytes + 1] = {};
  std::memcpy(text, entry.key, agent::kAggStringBytes);
  return text;
}

// Hits folded into two tables: (name, n bucketed by 10) -> hits and the sum of u; n -> min and max
// of n, for the hits its own filter (n > 0) lets through. The ring stays untouched.
TEST(AgentAggregation, HitsAreFoldedIntoTheTablesAndNeverTouchTheRing) {
  const std::string definition = "p:g/e work n=%di:s64 u=%si:u32 name=+0(%dx):string";
  const ProbeFetchPlan plan = plan_for(definition);
  auto capture = compile_agent_capture(plan);
  ASSERT_TRUE(capture);
  AgentAggregationSpec by_name;
  by_name.max_entries = 512;
  agent::AgentAggValue name = argument_part(agent::kFilterArgumentString, 2, 0, false);
  name.flags = agent::kAggString;
  agent::AgentAggValue tens = argument_part(agent::kFilterArgumentValue, 0, 8, true);
  tens.transform = agent::kTransformBuckets;
  tens.parameters[0] = 10;
  by_name.keys = {name, tens};
  by_name.values = {argument_part(agent::kFilterArgumentValue, 1, 4, false)};
  AgentAggregationSpec extremes;
  extremes.max_entries = 64;
  agent::AgentAggValue log2 = argument_part(agent::kFilterArgumentValue, 1, 4, false);
  log2.transform = agent::kTransformLog2Roundup;
  extremes.keys = {log2};
  agent::AgentAggValue low = argument_part(agent::kFilterArgumentValue, 0, 8, true), high = low;
  low.fold = agent::kFoldMin;
  high.fold = agent::kFoldMax;
  extremes.values = {low, high};
  const std::vector<std::string> names{"n", "u", "name"};
  const std::vector<FetchType> types{*fetch_type_named("s64", 8), *fetch_type_named("u32", 8), *fetch_type_named("string", 8)};
  auto filter = filter::parse_event_filter("n > 0", filter::event_fields(names, types, false));
  ASSERT_TRUE(filter);
  extremes.filter = filter::compile_agent_filter(filter.value(), plan, 0);
  ASSERT_FALSE(extremes.filter.empty());

  TestTable first(512, {agent::kFoldSum}), second(64, {agent::kFoldMin, agent::kFoldMax});
  const std::vector<AgentAggregationSpec> specs{by_name, extremes};
  const std::vector<uint64_t> tables{first.address(), second.address()};
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> aggregations = agent_aggregations_block(specs, tables);
  const std::vector<uint8_t> descriptor =
      agent_probe_descriptor(reinterpret_cast<uint64_t>(harness.ring()), 0, *capture, 0, 0, {}, aggregations);
  static const char* const kNames[] = {"alpha", "beta", "gamma"};
  std::map<uint64_t, std::pair<int64_t, int64_t>> expected_second;  // u's log2 -> min, max of n
  for (int i = 0; i < 300; ++i) {
    uint64_t block[agent::kSavedRegisterWords] = {};
    const int64_t n = i * 3 - 200;
    const uint32_t u = static_cast<uint32_t>(i * 977);
    block[reg("di")] = static_cast<uint64_t>(n);
    block[reg("si")] = 0xdead000000000000ull | u;  // a u32: the upper half is not the value's
    block[reg("dx")] = reinterpret_cast<uint64_t>(kNames[i % 3]);
    harness.hit(descriptor, block);
    if (n > 0) {
      uint64_t power = 0;
      while ((uint64_t{1} << power) < u) ++power;
      auto [it, fresh] = expected_second.try_emplace(power, n, n);
      it->second.first = std::min(it->second.first, n);
      it->second.second = std::max(it->second.second, n);
    }
  }
  EXPECT_EQ(harness.ring()->head, 0u) << "an aggregated hit wrote a record";
  EXPECT_EQ(harness.ring()->aggregated[0], 300u);

  auto update = first.read();
  ASSERT_TRUE(update) << update.error().message;
  // The kernel's .buckets divides the u64 value (a negative n lands far up).
  std::map<std::pair<std::string, int64_t>, std::pair<uint64_t, uint64_t>> seen_first;
  for (const AggregatedEntry& entry : update->entries)
    seen_first[{string_key(entry), static_cast<int64_t>(entry.key[agent::kAggStringBytes / 8])}] = {entry.hitcount, entry.values[0]};
  std::map<std::pair<std::string, int64_t>, std::pair<uint64_t, uint64_t>> unsigned_expected;
  for (int i = 0; i < 300; ++i) {
    const int64_t n = i * 3 - 200;
    const auto bucket = static_cast<int64_t>(static_cast<uint64_t>(n) / 10 * 10);
    auto& [hits, sum] = unsigned_expected[{kNames[i % 3], bucket}];
    ++hits;
    sum += static_cast<uint32_t>(i * 977);
  }
  EXPECT_EQ(seen_first, unsigned_expected);
  EXPECT_EQ(update->dropped, 0u);
  auto extremes_update = second.read();
  ASSERT_TRUE(extremes_update) << extremes_update.error().message;
  std::map<uint64_t, std::pair<int64_t, int64_t>> seen_second;
  for (const AggregatedEntry& entry : extremes_update->entries)
    seen_second[entry.key[0]] = {static_cast<int64_t>(entry.values[0]), static_cast<int64_t>(entry.values[1])};
  EXPECT_EQ(seen_second, expected_second);
  // A second read gives only what is new: nothing.
  auto again = first.read();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->entries.empty());
}

// A table smaller than the keys: the first keys get entries, the hits of the others are counted
// as dropped (the kernel's hist "Dropped:"), and none is recorded in the ring either.
TEST(AgentAggregation, AFullTableCountsTheHitsOfKeysWithoutRoom) {
  const ProbeFetchPlan plan = plan_for("p:g/e work n=%di:s64");
  auto capture = compile_agent_capture(plan);
  AgentAggregationSpec spec;
  spec.max_entries = 4;
  spec.keys = {argument_part(agent::kFilterArgumentValue, 0, 8, true)};
  TestTable table(4);
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> descriptor = folding_descriptor(harness, *capture, spec, table);
  for (int round = 0; round < 3; ++round) {
    for (uint64_t n = 0; n < 10; ++n) {
      uint64_t block[agent::kSavedRegisterWords] = {};
      block[reg("di")] = n;
      harness.hit(descriptor, block);
    }
  }
  auto update = table.read();
  ASSERT_TRUE(update) << update.error().message;
  ASSERT_EQ(update->entries.size(), 4u);
  for (const AggregatedEntry& entry : update->entries) {
    EXPECT_LT(entry.key[0], 4u);
    EXPECT_EQ(entry.hitcount, 3u);
  }
  EXPECT_EQ(update->dropped, 18u);
  EXPECT_EQ(harness.ring()->head, 0u);
}

// What the agent cannot read (a string behind a bad pointer) is recorded for the tracer.
TEST(AgentAggregation, AHitWhoseKeyFaultedIsRecordedForTheTracer) {
  const ProbeFetchPlan plan = plan_for("p:g/e work name=+0(%dx):string");
  auto capture = compile_agent_capture(plan);
  AgentAggregationSpec spec;
  agent::AgentAggValue name = argument_part(agent::kFilterArgumentString, 0, 0, false);
  name.flags = agent::kAggString;
  spec.keys = {name};
  spec.max_entries = 16;
  TestTable table(16);
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> descriptor = folding_descriptor(harness, *capture, spec, table);
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("dx")] = 16;  // unmapped
  harness.hit(descriptor, block);
  const std::string long_name(40, 'x');  // longer than a key holds
  block[reg("dx")] = reinterpret_cast<uint64_t>(long_name.c_str());
  harness.hit(descriptor, block);
  block[reg("dx")] = reinterpret_cast<uint64_t>("short");
  harness.hit(descriptor, block);
  EXPECT_EQ(harness.drain(1).records.size(), 2u);
  EXPECT_EQ(harness.ring()->aggregated[0], 1u);
  auto update = table.read();
  ASSERT_TRUE(update);
  ASSERT_EQ(update->entries.size(), 1u);
  EXPECT_EQ(string_key(update->entries[0]), "short");
}

// Threads racing for the same new keys: each key gets one entry, no hit is lost.
TEST(AgentAggregation, ThreadsRacingForNewKeysLoseNoHit) {
  const ProbeFetchPlan plan = plan_for("p:g/e work n=%di:s64 u=%si:u64");
  auto capture = compile_agent_capture(plan);
  AgentAggregationSpec spec;
  spec.max_entries = 256;
  spec.keys = {argument_part(agent::kFilterArgumentValue, 0, 8, true)};
  spec.values = {argument_part(agent::kFilterArgumentValue, 1, 8, false)};
  TestTable table(256, {agent::kFoldSum});
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> descriptor = folding_descriptor(harness, *capture, spec, table);
  constexpr int kThreads = 4, kHits = 20000, kKeys = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kHits; ++i) {
        uint64_t block[agent::kSavedRegisterWords] = {};
        block[reg("di")] = static_cast<uint64_t>((i + t) % kKeys);
        block[reg("si")] = 3;
        harness.hit(descriptor, block);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  auto update = table.read();
  ASSERT_TRUE(update) << update.error().message;
  std::map<uint64_t, uint64_t> counts;
  for (const AggregatedEntry& entry : update->entries) {
    EXPECT_EQ(counts.count(entry.key[0]), 0u) << "key " << entry.key[0] << " has two entries";
    counts[entry.key[0]] += entry.hitcount;
    EXPECT_EQ(entry.values[0], 3 * entry.hitcount);
  }
  ASSERT_EQ(counts.size(), static_cast<size_t>(kKeys));
  for (const auto& [key, count] : counts) EXPECT_EQ(count, static_cast<uint64_t>(kThreads * kHits / kKeys)) << key;
  EXPECT_EQ(update->dropped, 0u);
  EXPECT_EQ(harness.ring()->head, 0u);
}

// The tracer takes the tables while threads keep folding into them (--interval): every hit is
// in exactly one read, and each read is whole (an entry's sum is that of its hits).
TEST(AgentAggregation, ReadsWhileThreadsFoldTakeEveryHitExactlyOnce) {
  const ProbeFetchPlan plan = plan_for("p:g/e work n=%di:s64 u=%si:u64");
  auto capture = compile_agent_capture(plan);
  AgentAggregationSpec spec;
  spec.max_entries = 64;
  spec.keys = {argument_part(agent::kFilterArgumentValue, 0, 8, true)};
  spec.values = {argument_part(agent::kFilterArgumentValue, 1, 8, false)};
  TestTable table(64, {agent::kFoldSum});
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> descriptor = folding_descriptor(harness, *capture, spec, table);
  constexpr int kThreads = 3, kHits = 200000, kKeys = 8;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kHits; ++i) {
        uint64_t block[agent::kSavedRegisterWords] = {};
        block[reg("di")] = static_cast<uint64_t>((i + t) % kKeys);
        block[reg("si")] = 5;
        harness.hit(descriptor, block);
      }
      running.fetch_sub(1);
    });
  }
  std::map<uint64_t, uint64_t> counts;
  int reads_with_hits = 0, waited = 0;
  auto take = [&](bool final) {
    auto taken = table.collect(final);
    ASSERT_TRUE(taken) << taken.error().message;
    if (!taken->has_value()) {
      ++waited;
      return;
    }
    if (!(*taken)->entries.empty()) ++reads_with_hits;
    for (const AggregatedEntry& entry : (*taken)->entries) {
      counts[entry.key[0]] += entry.hitcount;
      EXPECT_EQ(entry.values[0], 5 * entry.hitcount) << "a read saw a hit counted but not summed";
    }
    EXPECT_EQ((*taken)->dropped, 0u);
  };
  while (running.load() != 0) {
    take(false);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (std::thread& thread : threads) thread.join();
  take(false);
  take(false);  // a table left busy by the last look is taken now
  uint64_t total = 0;
  for (const auto& [key, count] : counts) {
    EXPECT_EQ(count, static_cast<uint64_t>(kThreads * kHits / kKeys)) << "key " << key;
    total += count;
  }
  EXPECT_EQ(total, uint64_t{kThreads} * kHits);
  EXPECT_GE(reads_with_hits, 2) << "the reads took hits while the threads ran";
  EXPECT_EQ(harness.ring()->head, 0u);
}

// An agent still folding into the table the tracer left (a preempted or stopped thread): that
// table waits for the next read, which switches nothing meanwhile; a final read takes it as it is.
TEST(AgentAggregation, ATableWithAnAgentStillInItWaitsForTheNextRead) {
  const ProbeFetchPlan plan = plan_for("p:g/e work n=%di:s64");
  auto capture = compile_agent_capture(plan);
  AgentAggregationSpec spec;
  spec.max_entries = 16;
  spec.keys = {argument_part(agent::kFilterArgumentValue, 0, 8, true)};
  TestTable table(16);
  AgentHarness harness(1 << 20);
  const std::vector<uint8_t> descriptor = folding_descriptor(harness, *capture, spec, table);
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = 7;
  harness.hit(descriptor, block);  // into table 0
  table.pair().writers[0][0] = 1;  // as if another thread were inside the agent on table 0
  auto taken = table.collect();
  ASSERT_TRUE(taken);
  EXPECT_FALSE(taken->has_value());
  EXPECT_EQ(table.pair().active, 1u);
  harness.hit(descriptor, block);  // into table 1
  taken = table.collect();  // still busy: table 1 stays active
  ASSERT_TRUE(taken);
  EXPECT_FALSE(taken->has_value());
  EXPECT_EQ(table.pair().active, 1u);
  table.pair().writers[0][0] = 0;
  taken = table.collect();
  ASSERT_TRUE(taken && taken->has_value());
  ASSERT_EQ((*taken)->entries.size(), 1u);
  EXPECT_EQ((*taken)->entries[0].hitcount, 1u);
  EXPECT_EQ(table.header(0).entries, 0u) << "emptied for its next turn";
  EXPECT_EQ(table.pair().active, 1u);
  table.pair().writers[1][0] = 1;
  taken = table.collect(true);
  ASSERT_TRUE(taken && taken->has_value());
  ASSERT_EQ((*taken)->entries.size(), 1u);
  EXPECT_EQ((*taken)->entries[0].hitcount, 1u);
}

// --- the agent's own stacks ----------------------------------------------------------------

namespace agent_stacks {

// A thread stack with `room` bytes below its stack pointer, then an inaccessible page: the
// agent touching more of it than the trampoline's call would fault.
struct TightStack {
  explicit TightStack(size_t room) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    base = static_cast<uint8_t*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base, page, PROT_NONE);
    sp = reinterpret_cast<uint64_t>(base + page + room) & ~uint64_t{15};
    bytes = 2 * page;
  }
  ~TightStack() { munmap(base, bytes); }
  uint8_t* base = nullptr;
  size_t bytes = 0;
  uint64_t sp = 0;
};

TEST(AgentStacks, AHitNeedsNextToNothingOfTheThreadsStack) {
  // A goroutine's stack may hold only a few hundred bytes below its stack pointer: the agent
  // claims a stack of its own first and records there.
  static const char text[] = "on a tight stack";
  PreparedProbe probe("p:g/e work a=%di:s64 s=+0(%si):string", 1 << 16);
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[reg("di")] = 77;
  block[reg("si")] = reinterpret_cast<uint64_t>(text);
  TightStack stack(128);
  probe.harness.hit_with_stack_at(stack.sp, probe.descriptor, block);
  auto drained = probe.harness.drain(1);
  ASSERT_EQ(drained.records.size(), 1u);
  auto record = parse_agent_record(drained.records[0].second, probe.capture);
  ASSERT_TRUE(record);
  const auto replayed = replay_agent_record(probe.plan, *record, "agent_test");
  ASSERT_EQ(replayed.size(), 2u);
  EXPECT_EQ(show(replayed[0]), "ok:77,");
  EXPECT_EQ(show(replayed[1]), "ok:\"on a tight stack\",");
  for (uint64_t busy : probe.harness.ring()->stacks_busy) EXPECT_EQ(busy, 0u) << "the stack is given back";
}

TEST(AgentStacks, AHitFindingEveryAgentStackInUseIsCountedDropped) {
  PreparedProbe probe("p:g/e work a=%di:s64", 1 << 16);
  uint64_t block[agent::kSavedRegisterWords] = {};
  for (uint64_t& busy : probe.harness.ring()->stacks_busy) busy = ~uint64_t{0};
  probe.harness.hit(probe.descriptor, block);
  EXPECT_EQ(probe.harness.ring()->dropped[0], 1u);
  EXPECT_TRUE(probe.harness.drain(1).records.empty());
  probe.harness.ring()->stacks_busy[agent::kAgentStacks / 64 - 1] &= ~(uint64_t{1} << 63);  // one free again
  probe.harness.hit(probe.descriptor, block);
  EXPECT_EQ(probe.harness.drain(1).records.size(), 1u);
  EXPECT_EQ(probe.harness.ring()->dropped[0], 1u);
}

TEST(AgentStacks, ThreadsInsideTheAgentAtOnceEachHaveTheirOwn) {
  PreparedProbe probe("p:g/e work a=%di:s64 b=%si:s64", 1 << 22);
  constexpr int kThreads = 8, kHits = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t block[agent::kSavedRegisterWords] = {};
      block[reg("si")] = static_cast<uint64_t>(t);
      for (int i = 0; i < kHits; ++i) {
        block[reg("di")] = static_cast<uint64_t>(i);
        probe.harness.hit(probe.descriptor, block);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  auto drained = probe.harness.drain(1);
  ASSERT_EQ(drained.records.size(), size_t{kThreads} * kHits);
  std::vector<int> next(kThreads, 0);
  for (const auto& [index, bytes] : drained.records) {
    auto record = parse_agent_record(bytes, probe.capture);
    ASSERT_TRUE(record);
    const auto values = replay_agent_record(probe.plan, *record, "agent_test");
    const int t = std::stoi(show(values[1]).substr(3));
    ASSERT_TRUE(t >= 0 && t < kThreads);
    EXPECT_EQ(show(values[0]), "ok:" + std::to_string(next[t]++) + ",");
  }
  for (uint64_t busy : probe.harness.ring()->stacks_busy) EXPECT_EQ(busy, 0u);
}

}  // namespace agent_stacks

// --- Go programs: frames per goroutine ------------------------------------------------------

// A g as the Go runtime lays it out: its stack's bounds first.
struct FakeGoroutine {
  uint64_t stack_lo;
  uint64_t stack_hi;
  uint64_t rest[6];
};

TEST(AgentReturns, InAGoProgramAReturnOnAnotherThreadFromACopiedStackMatchesItsEntry) {
  ReturnProbe probe("r:g/e work ret=$retval:s64");
  probe.harness.returns().goroutine_frames = 1;
  const uint64_t site = 0x401234;
  probe.harness.add_site(site);
  alignas(16) static uint64_t first_stack[64], grown_stack[256];
  FakeGoroutine g{reinterpret_cast<uint64_t>(&first_stack[0]), reinterpret_cast<uint64_t>(&first_stack[64]), {}};
  probe.goroutine = reinterpret_cast<uint64_t>(&g);
  probe.enter(&first_stack[40], site, {});
  // The runtime copies the stack to a larger one (the frame keeps its distance from the top),
  // and the scheduler resumes the goroutine on another thread, where the call returns.
  g.stack_lo = reinterpret_cast<uint64_t>(&grown_stack[0]);
  g.stack_hi = reinterpret_cast<uint64_t>(&grown_stack[256]);
  std::thread([&] { probe.leave(&grown_stack[256 - 24], site, 42); }).join();
  EXPECT_EQ(probe.counters().active, 0u);
  EXPECT_EQ(probe.counters().discarded, 0u);
  auto drained = probe.harness.drain(1);
  ASSERT_EQ(drained.records.size(), 1u);
  auto record = parse_agent_record(drained.records[0].second, probe.capture);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->return_address, site);
  EXPECT_EQ(show(replay_agent_record(probe.plan, *record, "agent_test")[0]), "ok:42,");
  // The goroutine's slot is free again once its frames are over.
  size_t goroutine_slots = 0;
  for (const auto& slot : probe.harness.returns().threads) goroutine_slots += (slot.tid & agent::kGoroutineKey) != 0 && slot.tid != agent::kFreedThread;
  EXPECT_EQ(goroutine_slots, 0u);
}

TEST(AgentReturns, FramesFollowTheThreadWhereTheGoroutineDoesNotCheckOut) {
  // Not a Go program, or a g register that holds something else (C code in a cgo program):
  // the thread's frames, by stack pointer, as everywhere else. The same return as above then
  // finds nothing to match.
  alignas(16) static uint64_t first_stack[64], grown_stack[256];
  FakeGoroutine g{reinterpret_cast<uint64_t>(&first_stack[0]), reinterpret_cast<uint64_t>(&first_stack[64]), {}};
  for (const bool go : {false, true}) {
    ReturnProbe probe("r:g/e work ret=$retval:s64");
    probe.harness.returns().goroutine_frames = go ? 1 : 0;
    probe.harness.add_site(0x401234);
    // With `go`, a g whose bounds do not hold the stack pointer.
    g.stack_lo = reinterpret_cast<uint64_t>(&grown_stack[0]);
    g.stack_hi = reinterpret_cast<uint64_t>(&grown_stack[256]);
    probe.goroutine = reinterpret_cast<uint64_t>(&g);
    probe.enter(&first_stack[40], 0x401234, {});
    EXPECT_EQ(probe.counters().active, 1u);
    std::thread([&] { probe.leave(&first_stack[40], 0x401234, 42); }).join();
    EXPECT_TRUE(probe.harness.drain(1).records.empty()) << "another thread's frames";
    probe.leave(&first_stack[40], 0x401234, 43);
    auto drained = probe.harness.drain(1);
    ASSERT_EQ(drained.records.size(), 1u);
    auto record = parse_agent_record(drained.records[0].second, probe.capture);
    ASSERT_TRUE(record);
    EXPECT_EQ(show(replay_agent_record(probe.plan, *record, "agent_test")[0]), "ok:43,");
  }
}

}  // namespace
}  // namespace xprobe::probe
