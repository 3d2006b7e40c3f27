// Where the jump engine's ~300 ns per hit go: the agent's own machine code (the bytes xprobe
// copies into traced programs) called in this process as a trampoline calls it, next to the
// primitives a hit is made of (the system call it made for the thread id, the clock, the
// thread pointer, a compare-and-swap on a shared line, the trampoline's register block).
// Every ring-recording benchmark reports its drops: a per-hit figure counts only at zero.
//
//   build-bench/bench/agent_hit/agent_hit_bench [--benchmark_filter=...]
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "probe/agent/agent_abi.h"
#include "probe/agent/agent_code.h"
#include "probe/agent_capture.h"
#include "probe/definition_parser.h"
#include "probe/fetch_program.h"

namespace {

using namespace xprobe;

// The agent mapped executable, one ring, its stacks: what the jump engine maps in a program.
class Agent {
 public:
  explicit Agent(uint64_t ring_size) {
    code_ = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::memcpy(code_, agent::kAgentCode, agent::kAgentCodeSize);
    mprotect(code_, 1 << 16, PROT_READ | PROT_EXEC);
    hit_ = reinterpret_cast<void (*)(const void*, const uint64_t*)>(static_cast<uint8_t*>(code_) + agent::kAgentEntryOffset);
    ring_bytes_ = sizeof(agent::AgentRingHeader) + ring_size;
    ring_ = static_cast<agent::AgentRingHeader*>(
        mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ring_->magic = agent::kRingMagic;
    ring_->ring_size = ring_size;
    ring_->pid = static_cast<uint64_t>(getpid());
    stacks_ = mmap(nullptr, kStacksBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ring_->stacks = reinterpret_cast<uint64_t>(stacks_);
  }
  ~Agent() {
    munmap(code_, 1 << 16);
    munmap(ring_, ring_bytes_);
    munmap(stacks_, kStacksBytes);
  }
  std::vector<uint8_t> descriptor(const std::string& definition) const {
    auto parsed = probe::parse_definition(definition, probe::ParseOptions{insn::Arch::X86_64});
    const probe::ProbeFetchPlan plan = probe::compile_fetch_plan(parsed.value(), insn::Arch::X86_64);
    return probe::agent_probe_descriptor(reinterpret_cast<uint64_t>(ring_), 0, *probe::compile_agent_capture(plan), 0, 1);
  }
  void hit(const std::vector<uint8_t>& descriptor, const uint64_t* block) const { hit_(descriptor.data(), block); }
  agent::AgentRingHeader& ring() { return *ring_; }

 private:
  static constexpr size_t kStacksBytes = size_t{agent::kAgentStacks} * agent::kAgentStackBytes;
  void* code_ = nullptr;
  void* stacks_ = nullptr;
  size_t ring_bytes_ = 0;
  agent::AgentRingHeader* ring_ = nullptr;
  void (*hit_)(const void*, const uint64_t*) = nullptr;
};

// The engine turns the thread id cache on where the agent can read its thread pointer
// (JumpArch::agent_reads_thread_pointer); a build from before the cache has no such field.
template <typename Ring>
auto enable_tid_cache(Ring& ring, int) -> decltype(ring.tid_cache_on = 1, true) {
  ring.tid_cache_on = (getauxval(AT_HWCAP2) & 2) != 0 ? 1 : 0;
  return ring.tid_cache_on != 0;
}
template <typename Ring>
bool enable_tid_cache(Ring&, long) {
  return false;
}

Agent& shared_agent() {
  static Agent agent(uint64_t{1} << 24);
  static const bool cached = enable_tid_cache(agent.ring(), 0);
  static_cast<void>(cached);
  return agent;
}

// One entry hit with two register arguments (bench/peers/xprobe.sh's "entry" probe). The
// benchmark plays the tracer by freeing the ring as it goes (every thread: one that is not
// scheduled must not leave the others a full ring), so that no hit is dropped.
void BM_AgentEntryHit(benchmark::State& state) {
  Agent& agent = shared_agent();
  static const std::vector<uint8_t> descriptor = agent.descriptor("p:bench/work work a=%di:s64 b=%si:s64");
  uint64_t block[agent::kSavedRegisterWords] = {};
  block[14] = 7;   // rdi
  block[13] = 11;  // rsi
  const uint64_t dropped_before = __atomic_load_n(&agent.ring().dropped[0], __ATOMIC_RELAXED);
  for (auto _ : state) {
    agent.hit(descriptor, block);
    // Consumed at once (only the reservation's arithmetic cares; nobody reads the records).
    __atomic_store_n(&agent.ring().tail, __atomic_load_n(&agent.ring().head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
  }
  if (state.thread_index() == 0) state.counters["tid_cache"] = enable_tid_cache(agent.ring(), 0) ? 1 : 0;
  if (state.thread_index() == 0)
    state.counters["dropped"] = static_cast<double>(__atomic_load_n(&agent.ring().dropped[0], __ATOMIC_RELAXED) - dropped_before);
}
// CPU time, not wall time: on a shared machine a thread waits for a CPU far longer than a hit.
BENCHMARK(BM_AgentEntryHit)->Threads(1)->Threads(2);

// The system call the agent made on every hit for the record's thread id.
void BM_GettidSyscall(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(syscall(SYS_gettid));
}
BENCHMARK(BM_GettidSyscall);

// The record's timestamp and cpu (rdtscp).
void BM_Rdtscp(benchmark::State& state) {
  for (auto _ : state) {
    uint32_t low, high, aux;
    __asm__ volatile("rdtscp" : "=a"(low), "=d"(high), "=c"(aux));
    benchmark::DoNotOptimize(low + high + aux);
  }
}
BENCHMARK(BM_Rdtscp);

// The thread pointer (what a per-thread cache of the thread id is keyed by).
void BM_Rdfsbase(benchmark::State& state) {
  if ((getauxval(AT_HWCAP2) & 2) == 0) {  // HWCAP2_FSGSBASE: the kernel allows rdfsbase
    state.SkipWithError("no FSGSBASE");
    return;
  }
  for (auto _ : state) {
    uint64_t base;
    __asm__ volatile("rdfsbase %0" : "=r"(base));
    benchmark::DoNotOptimize(base);
  }
}
BENCHMARK(BM_Rdfsbase);

// A compare-and-swap on one line every thread writes (the ring's head, the stacks' bitmap).
void BM_SharedCas(benchmark::State& state) {
  alignas(64) static std::atomic<uint64_t> word{0};
  for (auto _ : state) {
    uint64_t seen = word.load(std::memory_order_acquire);
    while (!word.compare_exchange_weak(seen, seen + 16, std::memory_order_acq_rel)) {
    }
  }
}
BENCHMARK(BM_SharedCas)->Threads(1)->Threads(2);

// The trampoline's register block: 15 general registers, flags, rsp and rip stored, and
// loaded back (arch/x86/probe_support/trampoline.cpp), without the call to the agent.
void BM_TrampolineRegisterBlock(benchmark::State& state) {
  alignas(16) uint64_t block[20];
  for (auto _ : state) {
    __asm__ volatile(
        "mov %%r15, 0(%0)\n\t mov %%r14, 8(%0)\n\t mov %%r13, 16(%0)\n\t mov %%r12, 24(%0)\n\t"
        "mov %%rbp, 32(%0)\n\t mov %%rbx, 40(%0)\n\t mov %%r11, 48(%0)\n\t mov %%r10, 56(%0)\n\t"
        "mov %%r9, 64(%0)\n\t mov %%r8, 72(%0)\n\t mov %%rax, 80(%0)\n\t mov %%rcx, 88(%0)\n\t"
        "mov %%rdx, 96(%0)\n\t mov %%rsi, 104(%0)\n\t mov %%rdi, 112(%0)\n\t"
        "lea -128(%%rsp), %%rsp\n\t pushfq\n\t pop %%rax\n\t mov %%rax, 144(%0)\n\t mov %%rsp, 152(%0)\n\t"
        "mov %%rax, 128(%0)\n\t cld\n\t mov 144(%0), %%rax\n\t push %%rax\n\t popfq\n\t lea 128(%%rsp), %%rsp\n\t"
        "mov 0(%0), %%r15\n\t mov 8(%0), %%r14\n\t mov 16(%0), %%r13\n\t mov 24(%0), %%r12\n\t"
        "mov 32(%0), %%rbp\n\t mov 40(%0), %%rbx\n\t mov 48(%0), %%r11\n\t mov 56(%0), %%r10\n\t"
        "mov 64(%0), %%r9\n\t mov 72(%0), %%r8\n\t mov 80(%0), %%rax\n\t mov 88(%0), %%rcx\n\t"
        "mov 96(%0), %%rdx\n\t mov 104(%0), %%rsi\n\t mov 112(%0), %%rdi\n\t"
        :
        : "D"(block)
        : "rax", "memory", "cc");
  }
}
BENCHMARK(BM_TrampolineRegisterBlock);

}  // namespace

BENCHMARK_MAIN();
