#include "probe/engine/jump_engine.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "arch/x86/probe_support/execution_plan.h"
#include "arch/x86/probe_support/trampoline.h"
#include "probe/agent/agent_code.h"

namespace xprobe::probe::engine {

namespace ax86 = arch::x86;
using agent::AgentRingHeader;

namespace {

constexpr uint64_t kRingBytes = uint64_t{8} << 20;
constexpr uint64_t kCodeAreaBytes = uint64_t{1} << 20;
constexpr size_t kRingHeaderBytes = sizeof(AgentRingHeader);

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t align_up(uint64_t value, uint64_t to) { return (value + to - 1) & ~(to - 1); }

// A pid or tid as the process sees it (the last NSpid field: inside a container, not ours).
pid_t pid_seen_by(const std::string& status_path, pid_t fallback) {
  std::ifstream status(status_path);
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    const size_t last = line.find_last_of(" \t");
    if (last != std::string::npos && last + 1 < line.size()) return static_cast<pid_t>(std::stol(line.substr(last + 1)));
  }
  return fallback;
}

}  // namespace

struct JumpEngine::Probe {
  JumpProbeSpec spec;
  ax86::JumpPatchPlan plan;
  std::vector<uint8_t> original;  // the bytes the jump replaced
  uint64_t trampoline = 0;
  uint64_t descriptor = 0;
  bool planted = false;
};

JumpEngine::JumpEngine(target::Process& process) : process_(process) {
  // The TSC rate, measured over ~2 ms now and refined at every drain from this origin.
  tsc_origin_ = __rdtsc();
  ns_origin_ = monotonic_ns();
  uint64_t ns = ns_origin_;
  while (ns - ns_origin_ < 2000000) ns = monotonic_ns();
  tsc_per_ns_ = static_cast<double>(__rdtsc() - tsc_origin_) / static_cast<double>(ns - ns_origin_);
}

JumpEngine::~JumpEngine() = default;

Status JumpEngine::usable(pid_t pid) {
  if (target::seccomp_mode(pid) != 0)
    return make_error("the process runs under seccomp (the agent's system calls could be refused)");
  if (target::uses_shadow_stack(pid)) return make_error("the process uses a shadow stack");
  return {};
}

Result<ax86::JumpPatchPlan> JumpEngine::plan(const JumpProbeSpec& spec) {
  return ax86::plan_jump_patch(spec.function, spec.address);
}

Status JumpEngine::map_ring(pid_t tid) {
  const uint64_t size = kRingHeaderBytes + kRingBytes;
  // Anywhere will do; remote_mmap_near picks a free gap and maps it MAP_FIXED_NOREPLACE.
  auto mapped = process_.remote_mmap_near(tid, 0x7f0000000000, size, PROT_READ | PROT_WRITE, uint64_t{1} << 46);
  if (!mapped) return make_error(fmt::format("cannot map the event ring: {}", mapped.error().message));
  AgentRingHeader header{};
  header.magic = agent::kRingMagic;
  header.ring_size = kRingBytes;
  const pid_t own_pid = pid_seen_by(fmt::format("/proc/{}/status", process_.pid()), process_.pid());
  header.pid = static_cast<uint64_t>(own_pid);
  in_pid_namespace_ = own_pid != process_.pid();
  const uint64_t address = *mapped;
  if (auto written = process_.write(address, std::span(reinterpret_cast<const uint8_t*>(&header), kRingHeaderBytes)); !written)
    return written;
  ring_ = address;
  AgentRingReader::Io io;
  io.read = [this](uint64_t at, std::span<uint8_t> out) { return static_cast<bool>(process_.read(at, out)); };
  io.write = [this](uint64_t at, std::span<const uint8_t> bytes) { return static_cast<bool>(process_.write(at, bytes)); };
  ring_reader_ = std::make_unique<AgentRingReader>(std::move(io), address, kRingBytes);
  return {};
}

Result<uint64_t> JumpEngine::allocate_code(uint64_t near, uint64_t bytes, pid_t tid) {
  auto within = [&](const CodeArea& area) {
    const uint64_t low = std::min(area.start, near), high = std::max(area.start + area.size, near);
    return high - low <= ax86::kSlotReach;
  };
  for (CodeArea& area : areas_) {
    if (within(area) && area.used + bytes <= area.size) {
      const uint64_t at = area.start + area.used;
      area.used = align_up(area.used + bytes, 64);
      return at;
    }
  }
  auto start = process_.remote_mmap_near(tid, near, kCodeAreaBytes, PROT_READ | PROT_EXEC, ax86::kSlotReach - kCodeAreaBytes);
  if (!start) return start.error();
  // Every area starts with its own copy of the agent, within rel32 reach of its trampolines.
  if (auto written = process_.write(*start, std::span(agent::kAgentCode, agent::kAgentCodeSize)); !written) return written.error();
  CodeArea area{*start, kCodeAreaBytes, align_up(agent::kAgentCodeSize, 64)};
  areas_.push_back(area);
  CodeArea& added = areas_.back();
  const uint64_t at = added.start + added.used;
  added.used = align_up(added.used + bytes, 64);
  return at;
}

Status JumpEngine::add_probe(JumpProbeSpec spec, pid_t keep_stopped) {
  if (probes_.size() >= agent::kMaxProbes) return make_error("too many jump-optimized probes");
  if (!spec.patch) {
    auto planned = plan(spec);
    if (!planned) return planned.error();
    spec.patch = std::move(*planned);
  }
  const ax86::JumpPatchPlan patch = *spec.patch;
  // Five bytes are written: no thread may run meanwhile.
  const bool others_running = !process_.all_stopped();
  if (others_running) {
    if (auto stopped = process_.stop_all(); !stopped) return stopped;
  }
  struct ResumeOthers {
    target::Process& process;
    bool active;
    pid_t keep;
    ~ResumeOthers() {
      if (active) (void)process.resume_all(keep);
    }
  } resume_others{process_, others_running, keep_stopped};
  return plant(std::move(spec), patch);
}

Status JumpEngine::plant(JumpProbeSpec spec, const ax86::JumpPatchPlan& patch) {
  const pid_t tid = process_.thread_for_remote_call();
  if (tid == 0) return make_error("no stopped thread to set the jump up from");
  for (const auto& [thread, state] : process_.threads()) {
    if (state != target::ThreadState::Stopped) return make_error(fmt::format("thread {} could not be stopped", thread));
    auto registers = process_.get_registers(thread);
    if (!registers) return registers.error();
    if (registers->ip() > patch.address && registers->ip() < patch.address + patch.length)
      return make_error(fmt::format("thread {} is inside the bytes the jump would replace", thread));
  }
  // Probes at one address share the jump; their trampoline calls the agent for each.
  std::vector<Probe*> sharing;
  for (const auto& other : probes_) {
    if (!other->planted) continue;
    if (other->plan.address == patch.address && other->plan.length == patch.length) {
      sharing.push_back(other.get());
    } else if (patch.address < other->plan.address + other->plan.length && other->plan.address < patch.address + patch.length) {
      return make_error("overlaps another jump-optimized probe");
    }
  }
  if (sharing.size() + 1 > ax86::kMaxProbesPerTrampoline) return make_error("too many probes at one address");
  std::vector<uint8_t> live(patch.length);
  if (sharing.empty()) {
    // The live bytes must be the file's: no breakpoint of ours, no code the program rewrote.
    if (auto read = process_.read(patch.address, live); !read) return read;
    const auto file_offset = static_cast<size_t>(patch.address - spec.function.code.start);
    if (!std::equal(live.begin(), live.end(), spec.function.code.bytes.begin() + static_cast<std::ptrdiff_t>(file_offset)))
      return make_error("the code in memory differs from the file");
  } else {
    live = sharing.front()->original;
  }

  if (ring_ == 0)
    if (auto mapped = map_ring(tid); !mapped) return mapped;
  const auto index = static_cast<uint32_t>(probes_.size());
  const std::vector<uint8_t> descriptor = agent_probe_descriptor(ring_, index, spec.capture);
  auto block = allocate_code(patch.address, align_up(descriptor.size(), 64) + ax86::kTrampolineSize, tid);
  if (!block) return block.error();
  const uint64_t descriptor_address = *block;
  const uint64_t trampoline = *block + align_up(descriptor.size(), 64);
  const CodeArea& area = *std::find_if(areas_.begin(), areas_.end(), [&](const CodeArea& a) {
    return descriptor_address >= a.start && descriptor_address < a.start + a.size;
  });
  ax86::TrampolineTargets targets{trampoline, {}, area.start + agent::kAgentEntryOffset};
  for (const Probe* other : sharing) targets.descriptors.push_back(other->descriptor);
  targets.descriptors.push_back(descriptor_address);
  auto code = ax86::build_trampoline(patch, targets);
  if (!code) return code.error();
  auto jump = ax86::build_jump(patch.address, trampoline);
  if (!jump) return jump.error();
  if (auto written = process_.write(descriptor_address, descriptor); !written) return written;
  if (auto written = process_.write(trampoline, *code); !written) return written;
  // A new trampoline, then the jump to it: a thread still in the old one finishes there.
  if (auto written = process_.write(patch.address, *jump); !written) return written;

  auto probe = std::make_unique<Probe>();
  probe->spec = std::move(spec);
  probe->plan = patch;
  probe->original = std::move(live);
  probe->trampoline = trampoline;
  probe->descriptor = descriptor_address;
  probe->planted = true;
  probes_.push_back(std::move(probe));
  return {};
}

uint64_t JumpEngine::tsc_to_ns(uint64_t tsc, uint64_t tsc_now, uint64_t ns_now) const {
  // Records are at most a few milliseconds old when drained: anchored at "now", an error in
  // the rate costs nanoseconds, not drift.
  const double behind = static_cast<double>(static_cast<int64_t>(tsc_now - tsc)) / tsc_per_ns_;
  return ns_now - static_cast<uint64_t>(std::max(0.0, behind));
}

void JumpEngine::drain() {
  if (!ring_reader_ || draining_ || !process_.alive()) return;
  draining_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{draining_};
  const uint64_t tsc_now = __rdtsc();
  const uint64_t ns_now = monotonic_ns();
  if (ns_now - ns_origin_ > 100000000)
    tsc_per_ns_ = static_cast<double>(tsc_now - tsc_origin_) / static_cast<double>(ns_now - ns_origin_);
  ring_reader_->drain(
      static_cast<uint32_t>(probes_.size()),
      [&](uint32_t index, std::span<const uint8_t> bytes) {
        const JumpProbeSpec& spec = probes_[index]->spec;
        auto record = parse_agent_record(bytes, spec.capture);
        if (!record) {
          if (spec.on_lost) spec.on_lost(1);
        } else if (spec.on_record) {
          // The agent's gettid() is the process's view; events name threads as we see them.
          if (in_pid_namespace_) record->tid = static_cast<uint64_t>(host_tid(static_cast<pid_t>(record->tid)));
          spec.on_record(*record, tsc_to_ns(record->tsc, tsc_now, ns_now));
        }
      },
      [&](uint32_t index, uint64_t count) {
        if (probes_[index]->spec.on_lost) probes_[index]->spec.on_lost(count);
      });
}

pid_t JumpEngine::host_tid(pid_t seen) {
  auto found = host_tids_.find(seen);
  if (found != host_tids_.end()) return found->second;
  for (const auto& [tid, state] : process_.threads())
    host_tids_[pid_seen_by(fmt::format("/proc/{}/task/{}/status", process_.pid(), tid), tid)] = tid;
  found = host_tids_.find(seen);
  return found != host_tids_.end() ? found->second : seen;
}

unsigned JumpEngine::drain_interval_ms() {
  constexpr unsigned kShortest = 1, kLongest = 32;
  const double fill = ring_reader_ ? ring_reader_->last_fill() : 0;
  if (fill > 0.25) drain_interval_ms_ = std::max(kShortest, drain_interval_ms_ / 2);
  else if (fill < 0.03) drain_interval_ms_ = std::min(kLongest, drain_interval_ms_ * 2);
  return drain_interval_ms_;
}

void JumpEngine::finish() {
  drain();
  if (!ring_reader_) return;
  ring_reader_->abandon_unfinished([&](uint32_t index, uint64_t count) {
    if (index < probes_.size() && probes_[index]->spec.on_lost) probes_[index]->spec.on_lost(count);
  });
}

Status JumpEngine::restore_in(target::Process& process) {
  Status result;
  for (const auto& probe : probes_) {
    if (!probe->planted) continue;
    if (auto written = process.write(probe->plan.address, probe->original); !written && result) result = written;
  }
  if (&process == &process_) {
    for (auto& probe : probes_) probe->planted = false;
    drain();  // what came in while the jumps were being removed
  }
  // The ring's pages go back to the kernel: a detach must not leave megabytes behind. Its
  // header reads as zeros then, so a thread still inside a trampoline records nothing.
  if (ring_ != 0) {
    if (const pid_t tid = process.thread_for_remote_call(); tid != 0) {
      const uint64_t args[] = {ring_, kRingHeaderBytes + kRingBytes, MADV_DONTNEED};
      (void)process.remote_syscall(tid, SYS_madvise, args);
    }
  }
  return result;
}

void JumpEngine::forget_all() {
  probes_.clear();
  areas_.clear();
  ring_ = 0;
  ring_reader_.reset();
}

bool JumpEngine::covers(uint64_t address) const {
  for (const auto& probe : probes_)
    if (probe->planted && address >= probe->plan.address && address < probe->plan.address + probe->plan.length) return true;
  return false;
}

bool JumpEngine::handle_own_trap(pid_t, uint64_t) { return false; }

}  // namespace xprobe::probe::engine
