#include "probe/engine/jump_engine.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "probe/agent/agent_code.h"
#include "probe/agent/return_frames.h"
#include "supervisor/all_threads_stopped.h"

// Discarded results, on purpose: a write into the engine's own mapping in the process (the
// ring's header, the return probes' state: private, read-write, never unmapped while the
// process lives) fails only when the process is gone, and then nothing is left to keep
// consistent. Those writes are the `(void)process_.write(...)` below; other discards say why.
namespace xprobe::probe::engine {

using agent::AgentRingHeader;

namespace {

constexpr uint64_t kRingBytes = uint64_t{8} << 20;
constexpr uint64_t kCodeAreaBytes = uint64_t{1} << 20;
constexpr size_t kRingHeaderBytes = sizeof(AgentRingHeader);
constexpr uint64_t kPage = 4096;
// The ring, then the return probes' state, then the agent's stacks, in one mapping (the
// stacks' pages are only backed once a hit runs on them).
constexpr uint64_t kReturnsOffset = (kRingHeaderBytes + kRingBytes + kPage - 1) & ~(kPage - 1);
constexpr uint64_t kStacksOffset = kReturnsOffset + ((sizeof(agent::AgentReturnState) + kPage - 1) & ~(kPage - 1));
constexpr uint64_t kStacksBytes = uint64_t{agent::kAgentStacks} * agent::kAgentStackBytes;
constexpr uint64_t kMappingBytes = kStacksOffset + kStacksBytes;

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t align_up(uint64_t value, uint64_t to) { return (value + to - 1) & ~(to - 1); }

}  // namespace

struct JumpEngine::Probe {
  JumpProbeSpec spec;
  arch::JumpPlan plan;
  std::vector<uint8_t> original;  // the bytes the jump replaced
  uint64_t trampoline = 0;
  uint64_t descriptor = 0;
  bool planted = false;
  // Taken out by remove_probe(): switched off, and its jump gone unless probes planted later at
  // the same address still share it (planted stays true until then).
  bool removed = false;
  uint32_t index = 0;             // the agent's probe_index
  uint64_t missed_seen = 0;       // return probes: the agent's missed count at the last look
  uint64_t missed_by_tracer = 0;  // not reported yet
  uint64_t unwound_seen = 0;       // return probes: the agent's discarded count at the last look
  uint64_t unwound_by_tracer = 0;  // not reported yet
  uint64_t released = 0;          // frames the tracer popped (AgentProbeCounters::released)
  uint64_t filtered_seen = 0;     // the agent's filtered count at the last look
  uint64_t aggregated_seen = 0;   // the agent's aggregated count at the last look
  struct Table {
    AgentTablePairReader reader;
    bool failed = false;
  };
  std::vector<Table> tables;      // one per spec.agent_aggregations
  bool aggregating = false;       // the descriptor carries the aggregations
};

struct JumpEngine::ReturnSite {
  bool patched = false;  // else watched by a breakpoint
  arch::JumpPlan plan;
  std::vector<uint8_t> original;
  struct Redirected {
    uint64_t field = 0;              // where the branch's displacement is
    std::vector<uint8_t> original;   // its bytes before
  };
  std::vector<Redirected> redirected;
  bool planted = false;
};

JumpEngine::JumpEngine(supervisor::Supervisor& supervisor, const arch::JumpArch& arch)
    : supervisor_(supervisor), process_(supervisor.process()), arch_(arch) {
  // The agent's clock rate, measured over ~2 ms now and refined at every drain from this origin.
  clock_origin_ = arch_.read_clock();
  ns_origin_ = monotonic_ns();
  uint64_t ns = ns_origin_;
  while (ns - ns_origin_ < 2000000) ns = monotonic_ns();
  ticks_per_ns_ = static_cast<double>(arch_.read_clock() - clock_origin_) / static_cast<double>(ns - ns_origin_);
  supervisor_.join(*this);
}

JumpEngine::~JumpEngine() { supervisor_.leave(*this); }

Status JumpEngine::usable(pid_t pid) {
  if (target::seccomp_mode(pid) != 0)
    return make_error("the process runs under seccomp (the agent's system calls could be refused)");
  if (target::uses_shadow_stack(pid)) return make_error("the process uses a shadow stack");
  return {};
}

Result<arch::JumpPlan> JumpEngine::plan(const JumpProbeSpec& spec) const {
  return arch_.plan(spec.function, spec.address, arch::JumpPatchPlace::FunctionEntry);
}

Status JumpEngine::map_ring(pid_t tid) {
  // Anywhere will do; remote_mmap_near picks a free gap and maps it MAP_FIXED_NOREPLACE.
  auto mapped = process_.remote_mmap_near(tid, 0x7f0000000000, kMappingBytes, PROT_READ | PROT_WRITE, uint64_t{1} << 46);
  if (!mapped) return make_error(fmt::format("cannot map the event ring: {}", mapped.error().message));
  AgentRingHeader header{};
  header.magic = agent::kRingMagic;
  header.ring_size = kRingBytes;
  const pid_t own_pid = target::id_in_own_namespace(process_.pid(), process_.pid());
  header.pid = static_cast<uint64_t>(own_pid);
  in_pid_namespace_ = own_pid != process_.pid();
  const uint64_t address = *mapped;
  header.stacks = address + kStacksOffset;
  header.tid_cache_on = arch_.agent_reads_thread_pointer() ? 1 : 0;
  header.tid_cache_epoch = tid_cache_epoch_;
  header.tid_cache_shared = vfork_children_;
  if (auto written = process_.write(address, std::span(reinterpret_cast<const uint8_t*>(&header), kRingHeaderBytes)); !written)
    return written;
  ring_ = address;
  write_readable_ranges();
  returns_ = address + kReturnsOffset;
  write_goroutine_frames();
  site_table_.assign(agent::kSiteSlots, 0);
  AgentRingReader::Io io;
  io.read = [this](uint64_t at, std::span<uint8_t> out) { return static_cast<bool>(process_.read(at, out)); };
  io.write = [this](uint64_t at, std::span<const uint8_t> bytes) { return static_cast<bool>(process_.write(at, bytes)); };
  ring_reader_ = std::make_unique<AgentRingReader>(std::move(io), address, kRingBytes);
  return {};
}

void JumpEngine::set_goroutine_frames(bool on) {
  goroutine_frames_ = on;
  write_goroutine_frames();
}

void JumpEngine::write_goroutine_frames() {
  if (returns_ == 0) return;
  const uint64_t flag = goroutine_frames_ ? 1 : 0;
  (void)process_.write(returns_ + offsetof(agent::AgentReturnState, goroutine_frames),
                       std::span(reinterpret_cast<const uint8_t*>(&flag), 8));
}

bool JumpEngine::on_agent_stack(uint64_t sp) const {
  return ring_ != 0 && sp >= ring_ + kStacksOffset && sp <= ring_ + kStacksOffset + kStacksBytes;
}

agent::FrameOwner JumpEngine::frame_owner(pid_t tid, const target::Registers& registers) {
  return agent::frame_owner(goroutine_frames_, seen_tid(tid), registers.sp(), registers.goroutine(),
                            [this](uint64_t address, uint64_t* words, uint32_t count) {
                              return static_cast<bool>(process_.read(
                                  address, std::span(reinterpret_cast<uint8_t*>(words), size_t{count} * 8)));
                            });
}

void JumpEngine::set_readable_ranges(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
  readable_ = std::move(ranges);
  if (readable_.size() > agent::kReadableRanges) readable_.resize(agent::kReadableRanges);
  write_readable_ranges();
}

void JumpEngine::write_readable_ranges() {
  if (ring_ == 0) return;
  struct {
    uint64_t count;
    agent::AgentReadableRange ranges[agent::kReadableRanges];
  } block{};
  for (const auto& [begin, end] : readable_) block.ranges[block.count++] = {begin, end};
  static_assert(offsetof(AgentRingHeader, readable) == offsetof(AgentRingHeader, readable_count) + 8);
  (void)process_.write(ring_ + offsetof(AgentRingHeader, readable_count),
                       std::span(reinterpret_cast<const uint8_t*>(&block), sizeof block));
}

Result<uint64_t> JumpEngine::allocate_code(uint64_t near, uint64_t bytes, pid_t tid) {
  const AreaReach reach{arch_.reach(), 0};
  if (auto at = areas_.take(near, bytes, reach, 64)) return *at;
  auto start = process_.remote_mmap_near(tid, near, kCodeAreaBytes, PROT_READ | PROT_EXEC, arch_.reach() - kCodeAreaBytes);
  if (!start) return start.error();
  // Every area starts with its own copy of the agent, within reach of its trampolines; the
  // first also holds the stub for later remote system calls (arch/syscall_abi.h: a SIGKILLed
  // xprobe leaves no thread of the program in one).
  if (auto written = process_.write(*start, std::span(agent::kAgentCode, agent::kAgentCodeSize)); !written) return written.error();
  uint64_t reserved = agent::kAgentCodeSize;
  if (process_.syscall_stub() == 0) {
    auto stub = process_.syscall_stub_code(tid);
    if (!stub) return stub.error();
    const uint64_t stub_at = align_up(reserved, 64);
    if (auto installed = process_.install_syscall_stub(tid, *start + stub_at); !installed) return installed.error();
    reserved = stub_at + stub->size();
  }
  areas_.add(*start, kCodeAreaBytes, reserved);
  auto at = areas_.take(near, bytes, reach, 64);
  if (!at) return make_error("the new code area has no room for a trampoline");
  return *at;
}

Result<uint32_t> JumpEngine::add_probe(JumpProbeSpec spec) {
  if (probes_.size() >= agent::kMaxProbes) return make_error("too many jump-optimized probes");
  if (!spec.patch) {
    auto planned = plan(spec);
    if (!planned) return planned.error();
    spec.patch = std::move(*planned);
  }
  const arch::JumpPlan patch = *spec.patch;
  // Five bytes are written: no thread may run meanwhile.
  supervisor::AllThreadsStopped stopped(process_, supervisor_.handling_tid());
  if (!stopped.status()) return stopped.status().error();
  if (auto planted = plant(std::move(spec), patch); !planted) return planted.error();
  return probes_.back()->index;
}

void JumpEngine::set_enabled(uint32_t index, bool enabled) {
  if (index >= probes_.size() || ring_ == 0) return;
  if (probes_[index]->removed) enabled = false;
  const uint8_t flag = enabled ? 0 : 1;
  (void)process_.write(ring_ + offsetof(AgentRingHeader, disabled) + index, std::span(&flag, 1));
}

Status JumpEngine::remove_probe(uint32_t index) {
  if (index >= probes_.size() || probes_[index]->removed) return make_error("no such jump-optimized probe");
  Probe& probe = *probes_[index];
  set_enabled(index, false);
  probe.removed = true;
  if (!probe.planted) return {};
  std::vector<Probe*> behind_the_jump;
  for (const auto& other : probes_) {
    if (!other->planted || other->plan.address != probe.plan.address) continue;
    if (!other->removed) return {};  // the jump stays for it; this probe's hits are switched off
    behind_the_jump.push_back(other.get());
  }
  // The jump's bytes are rewritten: no thread may run meanwhile. A thread inside the
  // trampoline (its displaced copies, the agent) returns to the instruction after the patched
  // bytes, which are the program's own again.
  supervisor::AllThreadsStopped stopped(process_, supervisor_.handling_tid());
  if (!stopped.status()) return stopped.status();
  drain();  // what it recorded before, under its index
  if (auto written = process_.write(probe.plan.address, probe.original); !written) return written;
  for (Probe* other : behind_the_jump) other->planted = false;
  supervisor_.patches().release(*this, probe.plan.address);
  return {};
}

Status JumpEngine::check_patchable(const arch::JumpPlan& plan, const arch::CodeRange& file_code,
                                   bool share_entry) const {
  for (const auto& [thread, state] : process_.threads()) {
    if (state != target::ThreadState::Stopped) return make_error(fmt::format("thread {} could not be stopped", thread));
    auto registers = process_.get_registers(thread);
    if (!registers) return registers.error();
    if (registers->ip() > plan.address && registers->ip() < plan.address + plan.length)
      return make_error(fmt::format("thread {} is inside the bytes the jump would replace", thread));
  }
  auto overlaps = [&](const arch::JumpPlan& other) {
    return plan.address < other.address + other.length && other.address < plan.address + plan.length;
  };
  for (const auto& other : probes_) {
    if (!other->planted || !overlaps(other->plan)) continue;
    if (share_entry && other->plan.address == plan.address && other->plan.length == plan.length) continue;
    return make_error("overlaps another jump-optimized probe");
  }
  for (const auto& [address, site] : sites_) {
    if (!site->planted) continue;
    if (overlaps(site->plan)) return make_error("overlaps the jump of a return site");
    for (const auto& redirected : site->redirected)
      if (redirected.field < plan.address + plan.length && plan.address < redirected.field + redirected.original.size())
        return make_error("overlaps a branch redirected into a return site's trampoline");
    for (const arch::BranchRedirect& redirect : plan.redirects)
      if (redirect.branch < site->plan.address + site->plan.length && site->plan.address < redirect.branch + redirect.length)
        return make_error("a branch to redirect lies in another return site's jump");
  }
  if (clashes(plan)) return make_error("a breakpoint probe shares its bytes");
  for (const arch::BranchRedirect& redirect : plan.redirects) {
    for (const auto& other : probes_)
      if (other->planted && redirect.branch < other->plan.address + other->plan.length &&
          other->plan.address < redirect.branch + redirect.length)
        return make_error("a branch to redirect lies in a jump-optimized probe's jump");
  }
  if (share_entry) return {};
  // The live bytes must be the file's: no breakpoint of ours, no code the program rewrote.
  std::vector<uint8_t> live(plan.length);
  if (auto read = process_.read(plan.address, live); !read) return read;
  const auto offset = static_cast<size_t>(plan.address - file_code.start);
  if (offset + plan.length > file_code.bytes.size() ||
      !std::equal(live.begin(), live.end(), file_code.bytes.begin() + static_cast<std::ptrdiff_t>(offset)))
    return make_error("the code in memory differs from the file");
  return {};
}

// The file's bytes of a branch to redirect (which lies in the function or a split-off part).
std::optional<std::vector<uint8_t>> branch_file_bytes(const arch::JumpPatchFunction& function, const arch::BranchRedirect& redirect) {
  std::vector<const arch::CodeRange*> ranges{&function.code};
  for (const arch::CodeRange& part : function.split_parts) ranges.push_back(&part);
  for (const arch::CodeRange* range : ranges) {
    if (redirect.branch < range->start || redirect.branch + redirect.length > range->start + range->bytes.size()) continue;
    const auto offset = static_cast<size_t>(redirect.branch - range->start);
    return std::vector<uint8_t>(range->bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                range->bytes.begin() + static_cast<std::ptrdiff_t>(offset + redirect.length));
  }
  return std::nullopt;
}

Result<JumpEngine::Placed> JumpEngine::place_trampoline(const arch::JumpPlan& plan, const std::vector<uint8_t>& descriptor,
                                                       const std::vector<uint64_t>& other_descriptors, pid_t tid) {
  auto block = allocate_code(plan.address, align_up(descriptor.size(), 64) + arch_.trampoline_size(), tid);
  if (!block) return block.error();
  Placed placed;
  placed.descriptor = *block;
  placed.trampoline = *block + align_up(descriptor.size(), 64);
  arch::TrampolineTargets targets{placed.trampoline, other_descriptors,
                                  areas_.area_start(placed.descriptor) + agent::kAgentEntryOffset};
  targets.descriptors.push_back(placed.descriptor);
  auto code = arch_.build_trampoline(plan, targets);
  if (!code) return code.error();
  auto jump = arch_.build_jump(plan.address, placed.trampoline);
  if (!jump) return jump.error();
  if (auto written = process_.write(placed.descriptor, descriptor); !written) return written.error();
  if (auto written = process_.write(placed.trampoline, code->code); !written) return written.error();
  placed.displaced_at = std::move(code->displaced_at);
  placed.jump = std::move(*jump);
  return placed;
}

Status JumpEngine::plant(JumpProbeSpec spec, const arch::JumpPlan& patch) {
  const pid_t tid = process_.thread_for_remote_call();
  if (tid == 0) return make_error("no stopped thread to set the jump up from");
  // Probes at one address share the jump; their trampoline calls the agent for each (a removed
  // probe still behind the jump is left out of the new trampoline).
  std::vector<Probe*> sharing;
  size_t live_sharing = 0;
  for (const auto& other : probes_)
    if (other->planted && other->plan.address == patch.address && other->plan.length == patch.length) {
      sharing.push_back(other.get());
      live_sharing += other->removed ? 0 : 1;
    }
  if (live_sharing + 1 > arch_.max_probes_per_trampoline()) return make_error("too many probes at one address");
  if (auto ok = check_patchable(patch, spec.function.code, !sharing.empty()); !ok) return ok;
  std::vector<uint8_t> live;
  if (sharing.empty()) {
    const auto offset = static_cast<std::ptrdiff_t>(patch.address - spec.function.code.start);
    live.assign(spec.function.code.bytes.begin() + offset, spec.function.code.bytes.begin() + offset + static_cast<std::ptrdiff_t>(patch.length));
  } else {
    live = sharing.front()->original;
  }

  // The first code area (and the stub in it) before the ring: fewer calls before the stub.
  if (process_.syscall_stub() == 0)
    if (auto area = allocate_code(patch.address, 0, tid); !area) return area.error();
  if (ring_ == 0)
    if (auto mapped = map_ring(tid); !mapped) return mapped;
  const auto index = static_cast<uint32_t>(probes_.size());
  auto tables = map_aggregation_tables(spec, tid);
  if (!tables) return tables.error();
  const std::vector<uint8_t> aggregations =
      tables->empty() ? std::vector<uint8_t>{} : agent_aggregations_block(spec.agent_aggregations, *tables);
  const std::vector<uint8_t> descriptor = agent_probe_descriptor(
      ring_, index, spec.capture, spec.is_return ? returns_ : 0, spec.max_active ? spec.max_active : kDefaultMaxActive,
      spec.agent_filter, aggregations);
  std::vector<uint64_t> shared;
  for (const Probe* other : sharing)
    if (!other->removed) shared.push_back(other->descriptor);
  auto placed = place_trampoline(patch, descriptor, shared, tid);
  if (!placed) return placed.error();
  const uint8_t switched_off = spec.disabled ? 1 : 0;
  if (auto written = process_.write(ring_ + offsetof(AgentRingHeader, disabled) + index, std::span(&switched_off, 1));
      !written)
    return written;
  // A new trampoline, then the jump to it: a thread still in the old one finishes there.
  if (auto written = process_.write(patch.address, placed->jump); !written) return written;
  for (Probe* other : sharing)
    if (other->removed) other->planted = false;  // no longer called from the new trampoline

  auto probe = std::make_unique<Probe>();
  probe->spec = std::move(spec);
  probe->plan = patch;
  probe->original = std::move(live);
  probe->trampoline = placed->trampoline;
  probe->descriptor = placed->descriptor;
  probe->planted = true;
  probe->index = index;
  for (size_t a = 0; a < tables->size(); ++a) {
    std::vector<uint8_t> folds;
    for (const agent::AgentAggValue& value : probe->spec.agent_aggregations[a].values) folds.push_back(value.fold);
    probe->tables.push_back(Probe::Table{AgentTablePairReader((*tables)[a], probe->spec.agent_aggregations[a].max_entries, folds)});
  }
  probe->aggregating = !tables->empty();
  probes_.push_back(std::move(probe));
  if (sharing.empty()) supervisor_.patches().claim(*this, patch.address, patch.address + patch.length);
  return {};
}

Result<std::vector<uint64_t>> JumpEngine::map_aggregation_tables(const JumpProbeSpec& spec, pid_t tid) {
  std::vector<uint64_t> tables;
  if (spec.agent_aggregations.size() > agent::kMaxAggregations) return tables;  // the tracer aggregates
  for (const AgentAggregationSpec& aggregation : spec.agent_aggregations) {
    const uint32_t entries = aggregation.max_entries;
    if (entries == 0 || entries > agent::kMaxAggEntries || (entries & (entries - 1)) != 0)
      return make_error(fmt::format("an aggregation table of {} entries", entries));
    const uint64_t bytes = align_up(agent::agg_pair_bytes(entries), kPage);
    auto mapped = process_.remote_mmap_near(tid, ring_, bytes, PROT_READ | PROT_WRITE, uint64_t{1} << 46);
    if (!mapped) return make_error(fmt::format("cannot map an aggregation table: {}", mapped.error().message));
    const agent::AgentAggTableHeader header = agent_table_header(entries, ticks_per_ns_);
    for (uint64_t t = 0; t < 2; ++t)
      if (auto written = process_.write(*mapped + agent::agg_pair_table_offset(entries, t),
                                        std::span(reinterpret_cast<const uint8_t*>(&header), sizeof header));
          !written)
        return written.error();
    // The pair's header last: the agent uses no pair before its magic is there.
    const agent::AgentAggTablePair pair = agent_pair_header(entries);
    if (auto written = process_.write(*mapped, std::span(reinterpret_cast<const uint8_t*>(&pair), sizeof pair)); !written)
      return written.error();
    tables.push_back(*mapped);
  }
  return tables;
}

void JumpEngine::switch_off_aggregations(Probe& probe) {
  if (!probe.aggregating || probe.descriptor == 0) return;
  probe.aggregating = false;
  const uint32_t none = 0;
  // One aligned word: a thread reading the descriptor sees the aggregations or none.
  (void)process_.write(probe.descriptor + offsetof(agent::AgentProbe, aggregation_offset),
                       std::span(reinterpret_cast<const uint8_t*>(&none), 4));
}

void JumpEngine::collect_aggregations(bool final) {
  if (!process_.alive()) return;
  const AggregationMemory memory{
      [this](uint64_t address, std::span<uint8_t> into) { return process_.read(address, into).ok(); },
      [this](uint64_t address, std::span<const uint8_t> bytes) { return process_.write(address, bytes).ok(); }};
  for (const auto& probe : probes_) {
    for (size_t a = 0; a < probe->tables.size(); ++a) {
      Probe::Table& table = probe->tables[a];
      if (table.failed) continue;
      auto update = table.reader.collect(memory, final);
      if (update && !update->has_value()) continue;  // an agent is still in the table: the next collect takes it
      if (!update) {
        table.failed = true;
        switch_off_aggregations(*probe);
        if (probe->spec.on_aggregation_failed) probe->spec.on_aggregation_failed(update.error().message);
        continue;
      }
      const AggregationUpdate& taken = **update;
      if ((!taken.entries.empty() || taken.dropped != 0) && probe->spec.on_aggregated) probe->spec.on_aggregated(a, taken);
    }
  }
}

void JumpEngine::write_clock_mult() {
  const uint64_t mult = agent_clock_mult(ticks_per_ns_);
  // Rewritten when the rate moved by more than a millionth: a word per table.
  const uint64_t moved = mult > clock_mult_written_ ? mult - clock_mult_written_ : clock_mult_written_ - mult;
  if (moved <= mult / 1000000) return;
  clock_mult_written_ = mult;
  for (const auto& probe : probes_)
    for (const Probe::Table& table : probe->tables)
      for (uint64_t t = 0; t < 2; ++t)
        (void)process_.write(table.reader.address() + agent::agg_pair_table_offset(table.reader.max_entries(), t) +
                                 offsetof(agent::AgentAggTableHeader, clock_mult),
                             std::span(reinterpret_cast<const uint8_t*>(&mult), 8));
}

bool JumpEngine::clashes(const arch::JumpPlan& plan) const {
  if (supervisor_.patches().claimed_by_other(*this, plan.address, plan.address + plan.length)) return true;
  for (const arch::BranchRedirect& redirect : plan.redirects)
    if (supervisor_.patches().claimed_by_other(*this, redirect.branch, redirect.branch + redirect.length)) return true;
  return false;
}

uint64_t JumpEngine::clock_to_ns(uint64_t ticks, uint64_t ticks_now, uint64_t ns_now) const {
  // Records are at most a few milliseconds old when drained: anchored at "now", an error in
  // the rate costs nanoseconds, not drift.
  const double behind = static_cast<double>(static_cast<int64_t>(ticks_now - ticks)) / ticks_per_ns_;
  return ns_now - static_cast<uint64_t>(std::max(0.0, behind));
}

void JumpEngine::drain() {
  if (!ring_reader_ || draining_ || !process_.alive()) return;
  draining_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{draining_};
  const uint64_t ticks_now = arch_.read_clock();
  const uint64_t ns_now = monotonic_ns();
  if (ns_now - ns_origin_ > 100000000) {
    ticks_per_ns_ = static_cast<double>(ticks_now - clock_origin_) / static_cast<double>(ns_now - ns_origin_);
    write_clock_mult();
  }
  ring_reader_->drain(
      static_cast<uint32_t>(probes_.size()),
      [&](uint32_t index, std::span<const uint8_t> bytes) {
        const JumpProbeSpec& spec = probes_[index]->spec;
        ++records_read_;
        auto record = parse_agent_record(bytes, spec.capture);
        if (!record) {
          if (spec.on_lost) spec.on_lost(1);
        } else if (spec.on_record) {
          // The agent's gettid() is the process's view; events name threads as we see them.
          if (in_pid_namespace_) record->tid = static_cast<uint64_t>(host_tid(static_cast<pid_t>(record->tid)));
          spec.on_record(*record, clock_to_ns(record->tsc, ticks_now, ns_now));
        }
      },
      [&](uint32_t index, uint64_t count) {
        if (probes_[index]->spec.on_lost) probes_[index]->spec.on_lost(count);
      });
  // Drains happen while the memory is there (before a thread's exit, an exec): so do these.
  collect_filtered();
}

pid_t JumpEngine::host_tid(pid_t seen) {
  auto found = host_tids_.find(seen);
  if (found != host_tids_.end()) return found->second;
  for (const auto& [tid, state] : process_.threads())
    host_tids_[target::id_in_own_namespace(process_.pid(), tid)] = tid;
  found = host_tids_.find(seen);
  return found != host_tids_.end() ? found->second : seen;
}

void JumpEngine::adapt_drain_interval() {
  constexpr unsigned kShortest = 1, kLongest = 32;
  const double fill = ring_reader_ ? ring_reader_->last_fill() : 0;
  if (fill > 0.25) drain_interval_ms_ = std::max(kShortest, drain_interval_ms_ / 2);
  else if (fill < 0.03) drain_interval_ms_ = std::min(kLongest, drain_interval_ms_ * 2);
}

void JumpEngine::on_idle() {
  drain();
  serve_pending_requests();
  adapt_drain_interval();
}

bool JumpEngine::on_own_signal(target::Process& space, pid_t tid, int signal) {
  return &space == &process_ && handle_own_signal(tid, signal);
}

void JumpEngine::on_thread_exiting(pid_t tid) {
  drain();  // what the thread recorded, before its memory goes
  collect_aggregations();
  thread_exited(tid);
  // A thread created later may get this one's thread pointer (the C library reuses a thread's
  // stack and its thread block): every remembered id is asked again once. The thread is
  // stopped until this is written, and its thread block is not reused before it goes on.
  ++tid_cache_epoch_;
  write_tid_cache_word(offsetof(AgentRingHeader, tid_cache_epoch), tid_cache_epoch_);
}

void JumpEngine::on_vfork_child(bool running) {
  // The child runs with its parent's thread pointer: no remembered id is the child's, and
  // the child must not leave its own behind. Written before it runs, and once it is gone.
  vfork_children_ = running ? vfork_children_ + 1 : (vfork_children_ > 0 ? vfork_children_ - 1 : 0);
  write_tid_cache_word(offsetof(AgentRingHeader, tid_cache_shared), vfork_children_);
}

void JumpEngine::write_tid_cache_word(size_t offset, uint64_t value) {
  if (ring_ == 0 || !process_.alive()) return;
  // A process that cannot be written is gone: there is no hit left to stamp.
  (void)process_.write(ring_ + offset, std::span(reinterpret_cast<const uint8_t*>(&value), 8));
}

void JumpEngine::clean_forked_child(target::Process& child) {
  // The child is let go either way; a byte that cannot be written back is its loss alone.
  static_cast<void>(restore_in(child));
}

void JumpEngine::on_exec() {
  // The tables went with the old image (read before its exec calls, see collect_aggregations()).
  for (auto& probe : probes_) probe->tables.clear();
  finish();  // what the old image recorded before its exec
  forget_all();
}

Status JumpEngine::remove_patches() {
  if (!process_.alive()) return {};
  drain();
  collect_aggregations(true);
  return restore_in(process_);
}

void JumpEngine::finish() {
  drain();
  collect_aggregations(true);
  collect_counters();
  if (!ring_reader_) return;
  ring_reader_->abandon_unfinished([&](uint32_t index, uint64_t count) {
    if (index < probes_.size() && probes_[index]->spec.on_lost) probes_[index]->spec.on_lost(count);
  });
}

Status JumpEngine::restore_in(target::Process& process) {
  // Every thread of `process` is stopped here (a forked child at its first stop, or a
  // detach's stop of all threads): the pieces go in page by page.
  std::vector<target::WritePiece> pieces;
  for (const auto& probe : probes_)
    if (probe->planted) pieces.push_back({probe->plan.address, probe->original});
  for (const auto& [address, site] : sites_) {
    if (!site->planted) continue;
    pieces.push_back({address, site->original});
    for (const auto& branch : site->redirected) pieces.push_back({branch.field, branch.original});
  }
  Status result = process.write_pieces(pieces);
  if (&process == &process_) {
    for (auto& probe : probes_) probe->planted = false;
    for (auto& [address, site] : sites_) site->planted = false;
    supervisor_.patches().release_all(*this);
    drain();  // what came in while the jumps were being removed
    collect_counters();
  }
  // The ring's pages go back to the kernel: a detach must not leave megabytes behind. Its
  // header reads as zeros then, so a thread still inside a trampoline records nothing. The
  // agent's stacks stay: a thread may still be running on one.
  if (ring_ != 0) {
    if (const pid_t tid = process.thread_for_remote_call(); tid != 0) {
      const uint64_t args[] = {ring_, kStacksOffset, MADV_DONTNEED};
      // Giving the ring's pages back is a courtesy: if it fails they stay, unused.
      (void)process.remote_syscall(tid, SYS_madvise, args);
    }
  }
  return result;
}

void JumpEngine::forget_all() {
  supervisor_.patches().release_all(*this);
  probes_.clear();
  areas_.clear();
  ring_ = 0;
  returns_ = 0;
  ring_reader_.reset();
  sites_.clear();
  site_table_.clear();
  thread_slots_.clear();
}

// --- return probes -----------------------------------------------------------------------

uint64_t JumpEngine::seen_tid(pid_t tid) {
  if (!in_pid_namespace_) return static_cast<uint64_t>(tid);
  const pid_t seen = target::id_in_own_namespace(process_.pid(), tid);
  host_tids_[seen] = tid;
  return static_cast<uint64_t>(seen);
}

uint64_t JumpEngine::thread_address(uint32_t slot) const {
  return returns_ + offsetof(agent::AgentReturnState, threads) + uint64_t{slot} * sizeof(agent::AgentThread);
}

std::optional<uint32_t> JumpEngine::thread_slot(uint64_t seen) {
  if (returns_ == 0) return std::nullopt;
  // A goroutine's slot is given back by the agent when its frames are over: never cached.
  const bool cache = (seen & agent::kGoroutineKey) == 0;
  if (auto cached = thread_slots_.find(seen); cache && cached != thread_slots_.end()) return cached->second;
  uint32_t at = agent::thread_slot_hash(seen);
  for (uint32_t n = 0; n < agent::kThreadSlots; ++n, at = (at + 1) & (agent::kThreadSlots - 1)) {
    uint64_t owner = 0;
    if (!process_.read(thread_address(at), std::span(reinterpret_cast<uint8_t*>(&owner), 8))) return std::nullopt;
    if (owner == seen) {
      if (cache) thread_slots_[seen] = at;
      return at;
    }
    if (owner == 0) return std::nullopt;
  }
  return std::nullopt;
}

uint64_t JumpEngine::site_table_entry(uint64_t address) const {
  uint32_t at = agent::site_slot_hash(address);
  for (uint32_t n = 0; n < agent::kSiteSlots && at < site_table_.size(); ++n, at = (at + 1) & (agent::kSiteSlots - 1)) {
    if (site_table_[at] == 0) return 0;
    if ((site_table_[at] & ~agent::kSiteFlags) == address) return site_table_[at];
  }
  return 0;
}

void JumpEngine::add_site_entry(uint64_t entry) {
  const uint64_t address = entry & ~agent::kSiteFlags;
  uint32_t at = agent::site_slot_hash(address);
  for (uint32_t n = 0; n < agent::kSiteSlots; ++n, at = (at + 1) & (agent::kSiteSlots - 1)) {
    if (site_table_[at] != 0 && (site_table_[at] & ~agent::kSiteFlags) != address) continue;
    site_table_[at] = entry;
    (void)process_.write(returns_ + offsetof(agent::AgentReturnState, sites) + 8ull * at,
                         std::span(reinterpret_cast<const uint8_t*>(&entry), 8));
    return;
  }
  // A full table: the agent keeps asking for this site, and the frame stays counted.
}

bool JumpEngine::handle_own_signal(pid_t tid, int signal) {
  if (signal != agent::kRequestSignal || returns_ == 0) return false;
  auto slot = thread_slot(seen_tid(tid));
  if (!slot) return false;
  const uint64_t request_at = thread_address(*slot) + offsetof(agent::AgentThread, request);
  uint64_t request = 0;
  if (!process_.read(request_at, std::span(reinterpret_cast<uint8_t*>(&request), 8)) || request == 0) return false;
  const uint64_t none = 0;
  (void)process_.write(request_at, std::span(reinterpret_cast<const uint8_t*>(&none), 8));
  if (sites_.count(request)) return true;  // served already, for another thread
  serve_request(request);
  if (sites_.at(request)->patched || (site_table_entry(request) & agent::kSiteTrapped) != 0) return true;
  // Neither patched nor watched: this call's return would go unseen. Its frame (pushed while
  // the site was unknown) is taken back and counted as missed; the agent counts the next calls.
  auto thread = read_thread(*slot);
  if (!thread || thread->depth == 0 || thread->frames[thread->depth - 1].return_address != request) return true;
  write_depth(*slot, thread->depth - 1);
  release_frames({thread->frames[thread->depth - 1]}, false);
  return true;
}

void JumpEngine::serve_request(uint64_t address) {
  auto planted = plant_return_site(address);
  if (planted) {
    add_site_entry(address);
    return;
  }
  if (site_host_) site_host_->return_site_not_patched(address, planted.error().message);
  // Watched by a breakpoint if the user allows breakpoints; else its returns are missed.
  const bool watched = site_host_ && site_host_->watch_return_site(address);
  sites_[address] = std::make_unique<ReturnSite>();
  add_site_entry(address | (watched ? agent::kSiteTrapped : agent::kSiteUnwatched));
}

void JumpEngine::serve_pending_requests() {
  if (returns_ == 0 || !process_.alive()) return;
  uint64_t pending[agent::kPendingSlots] = {};
  const uint64_t at = returns_ + offsetof(agent::AgentReturnState, pending);
  if (!process_.read(at, std::span(reinterpret_cast<uint8_t*>(pending), sizeof pending))) return;
  if (std::all_of(std::begin(pending), std::end(pending), [](uint64_t site) { return site == 0; })) return;
  supervisor::AllThreadsStopped stopped(process_, supervisor_.handling_tid());
  if (!stopped.status()) return;
  for (uint32_t i = 0; i < agent::kPendingSlots; ++i) {
    if (pending[i] == 0) continue;
    const uint64_t none = 0;
    (void)process_.write(at + 8ull * i, std::span(reinterpret_cast<const uint8_t*>(&none), 8));
    if (!sites_.count(pending[i])) serve_request(pending[i]);
  }
  // Calls that returned through those sites before they were planted: their frames are over.
  release_finished_frames();
}

Status JumpEngine::plant_return_site(uint64_t address) {
  if (!site_host_) return make_error("return sites are not supported here");
  auto function = site_host_->describe_return_site(address);
  if (!function) return function.error();
  auto plan = arch_.plan(*function, address, arch::JumpPatchPlace::ReturnSite);
  if (!plan) return plan.error();
  if (supervisor_.patches().claimed_by_other(*this, address, address + plan->length))
    return make_error("a breakpoint sits in its bytes");
  for (const arch::BranchRedirect& redirect : plan->redirects)
    if (supervisor_.patches().claimed_by_other(*this, redirect.branch, redirect.branch + redirect.length))
      return make_error(fmt::format("a breakpoint sits on the branch at 0x{:x}", redirect.branch));
  supervisor::AllThreadsStopped stopped(process_, supervisor_.handling_tid());
  if (!stopped.status()) return stopped.status();
  if (auto ok = check_patchable(*plan, function->code, false); !ok) return ok;
  std::vector<ReturnSite::Redirected> redirected;
  for (const arch::BranchRedirect& redirect : plan->redirects) {
    auto file = branch_file_bytes(*function, redirect);
    std::vector<uint8_t> live(redirect.length);
    if (!file || !process_.read(redirect.branch, live) || live != *file)
      return make_error(fmt::format("the branch at 0x{:x} in memory differs from the file", redirect.branch));
    const auto field_size = static_cast<std::ptrdiff_t>(arch_.redirect_field_size());
    redirected.push_back({redirect.branch + redirect.length - arch_.redirect_field_size(),
                          std::vector<uint8_t>(live.end() - field_size, live.end())});
  }
  const pid_t tid = process_.thread_for_remote_call();
  if (tid == 0) return make_error("no stopped thread to set the jump up from");
  auto placed = place_trampoline(*plan, agent_return_site_descriptor(ring_, returns_), {}, tid);
  if (!placed) return placed.error();
  std::vector<std::vector<uint8_t>> fields;
  for (const arch::BranchRedirect& redirect : plan->redirects) {
    auto field = arch_.build_redirect(redirect, placed->displaced_at.at(redirect.displaced));
    if (!field) return field.error();
    fields.push_back(std::move(*field));
  }
  // The branches first: their new target, the displaced copy, does what the original does.
  for (size_t i = 0; i < fields.size(); ++i) {
    if (auto written = process_.write(redirected[i].field, fields[i]); !written) {
      // Undone as far as it goes: the first error is the one reported.
      for (size_t j = 0; j < i; ++j) (void)process_.write(redirected[j].field, redirected[j].original);
      return written;
    }
  }
  if (auto written = process_.write(address, placed->jump); !written) {
    for (const auto& branch : redirected) (void)process_.write(branch.field, branch.original);  // as above
    return written;
  }
  auto site = std::make_unique<ReturnSite>();
  site->redirected = std::move(redirected);
  site->patched = true;
  site->plan = *plan;
  const auto offset = static_cast<std::ptrdiff_t>(address - function->code.start);
  site->original.assign(function->code.bytes.begin() + offset, function->code.bytes.begin() + offset + static_cast<std::ptrdiff_t>(plan->length));
  site->planted = true;
  supervisor_.patches().claim(*this, address, address + plan->length);
  for (const arch::BranchRedirect& redirect : plan->redirects)
    supervisor_.patches().claim(*this, redirect.branch, redirect.branch + redirect.length);
  sites_[address] = std::move(site);
  return {};
}

void JumpEngine::release_frames(const std::vector<agent::AgentFrame>& frames, bool last_returned) {
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint32_t index = frames[i].probe_index;
    if (index >= probes_.size()) continue;
    Probe& probe = *probes_[index];
    ++probe.released;
    // Over without being seen returning, from a site the agent did not know: an unseen return.
    const bool returned = last_returned && i + 1 == frames.size();
    if (!returned) ++((frames[i].flags & agent::kFrameSiteUnknown) ? probe.missed_by_tracer : probe.unwound_by_tracer);
    (void)process_.write(returns_ + offsetof(agent::AgentReturnState, counters) + index * sizeof(agent::AgentProbeCounters) +
                             offsetof(agent::AgentProbeCounters, released),
                         std::span(reinterpret_cast<const uint8_t*>(&probe.released), 8));
  }
}

std::unique_ptr<agent::AgentThread> JumpEngine::read_thread(uint32_t slot) {
  auto thread = std::make_unique<agent::AgentThread>();
  if (!process_.read(thread_address(slot), std::span(reinterpret_cast<uint8_t*>(thread.get()), sizeof *thread))) return nullptr;
  if (thread->depth > agent::kMaxFrames) thread->depth = 0;  // the program's memory: anything goes
  return thread;
}

void JumpEngine::write_depth(uint32_t slot, uint64_t depth) {
  (void)process_.write(thread_address(slot) + offsetof(agent::AgentThread, depth), std::span(reinterpret_cast<const uint8_t*>(&depth), 8));
}

void JumpEngine::return_trapped(const HitContext& context) {
  const agent::FrameOwner owner = frame_owner(context.tid, context.registers);
  auto slot = thread_slot(owner.key);
  if (!slot) return;
  auto thread = read_thread(*slot);
  if (!thread) return;
  const uint64_t depth_before = thread->depth;
  std::vector<agent::AgentFrame> popped;
  agent::AgentFrame returning{};
  const bool returns = agent::pop_returning_frame(*thread, owner.sp, context.address, returning,
                                                  [&](const agent::AgentFrame& frame) { popped.push_back(frame); });
  if (thread->depth == depth_before) return;
  write_depth(*slot, thread->depth);
  if (returns) popped.push_back(returning);
  release_frames(popped, returns);
  if (!returns || returning.probe_index >= probes_.size()) return;
  const JumpProbeSpec& spec = probes_[returning.probe_index]->spec;
  if (!spec.is_return || !spec.on_trapped_return) return;
  const uint32_t saved = std::min(spec.capture.saved_count, agent::kMaxSavedWords);
  spec.on_trapped_return(context, context.address, std::span<const uint64_t>(returning.saved, saved));
}

void JumpEngine::release_finished_frames() {
  for (const auto& [tid, state] : process_.threads()) {
    auto slot = thread_slot(seen_tid(tid));
    if (!slot) continue;
    auto registers = process_.get_registers(tid);
    // A thread inside the agent is on an agent stack: its stack pointer says nothing of its frames.
    if (!registers || on_agent_stack(registers->sp())) continue;
    auto thread = read_thread(*slot);
    if (!thread) continue;
    // Frames entered below the stack pointer are over: the thread is back in a caller.
    std::vector<agent::AgentFrame> over;
    agent::discard_frames_at_or_below(*thread, registers->sp() - 1, [&](const agent::AgentFrame& frame) { over.push_back(frame); });
    if (over.empty()) continue;
    write_depth(*slot, thread->depth);
    release_frames(over, false);
  }
}

void JumpEngine::thread_exited(pid_t tid) {
  auto slot = thread_slot(seen_tid(tid));
  if (!slot) return;
  // What the thread leaves behind never returns: unseen returns among it are counted.
  if (auto thread = read_thread(*slot)) {
    std::vector<agent::AgentFrame> left(thread->frames, thread->frames + thread->depth);
    release_frames(left, false);
  }
  const uint64_t freed = agent::kFreedThread;
  write_depth(*slot, 0);
  (void)process_.write(thread_address(*slot), std::span(reinterpret_cast<const uint8_t*>(&freed), 8));
  for (auto it = thread_slots_.begin(); it != thread_slots_.end();) {
    it = it->second == *slot ? thread_slots_.erase(it) : std::next(it);
  }
  collect_counters();
}

uint64_t JumpEngine::clock_now() const { return arch_.read_clock(); }

uint32_t JumpEngine::replace_agent_work(uint32_t index, const std::function<void(JumpProbeSpec&)>& change) {
  if (index >= probes_.size() || probes_[index]->removed) return index;
  Probe& probe = *probes_[index];
  auto lose_agent_work = [&] {
    switch_off_aggregations(probe);
    if (probe.spec.agent_filter.empty() || probe.descriptor == 0) return index;
    const uint32_t none = 0;
    // One aligned word: a thread reading the descriptor sees the filter or none.
    (void)process_.write(probe.descriptor + offsetof(agent::AgentProbe, filter_offset),
                         std::span(reinterpret_cast<const uint8_t*>(&none), 4));
    return index;
  };
  if (!probe.planted || probe.spec.is_return) return lose_agent_work();
  uint8_t disabled = 1;
  (void)process_.read(ring_ + offsetof(AgentRingHeader, disabled) + index, std::span(&disabled, 1));
  JumpProbeSpec again = probe.spec;
  change(again);
  again.disabled = disabled != 0;
  again.patch = probe.plan;
  auto added = add_probe(std::move(again));
  if (!added) return lose_agent_work();
  // Should the old one's bytes fail to go, it is switched off all the same: the new one counts.
  static_cast<void>(remove_probe(index));
  return *added;
}

void JumpEngine::collect_filtered() {
  if (!process_.alive() || ring_ == 0) return;
  for (const auto& probe : probes_) {
    if (probe->spec.agent_filter.empty()) continue;
    uint64_t filtered = probe->filtered_seen;  // a failed read leaves the count as last seen
    (void)process_.read(ring_ + offsetof(AgentRingHeader, filtered) + probe->index * 8,
                        std::span(reinterpret_cast<uint8_t*>(&filtered), 8));
    if (filtered > probe->filtered_seen && probe->spec.on_filtered) probe->spec.on_filtered(filtered - probe->filtered_seen);
    probe->filtered_seen = std::max(filtered, probe->filtered_seen);
  }
  for (const auto& probe : probes_) {
    if (probe->tables.empty()) continue;
    uint64_t aggregated = probe->aggregated_seen;
    (void)process_.read(ring_ + offsetof(AgentRingHeader, aggregated) + probe->index * 8,
                        std::span(reinterpret_cast<uint8_t*>(&aggregated), 8));
    if (aggregated > probe->aggregated_seen && probe->spec.on_aggregated_hits)
      probe->spec.on_aggregated_hits(aggregated - probe->aggregated_seen);
    probe->aggregated_seen = std::max(aggregated, probe->aggregated_seen);
  }
}

void JumpEngine::collect_counters() {
  collect_filtered();
  if (returns_ == 0 || !process_.alive()) return;
  for (const auto& probe : probes_) {
    if (!probe->spec.is_return) continue;
    uint64_t missed = probe->missed_seen;  // a failed read leaves the count as last seen
    (void)process_.read(returns_ + offsetof(agent::AgentReturnState, counters) + probe->index * sizeof(agent::AgentProbeCounters) +
                            offsetof(agent::AgentProbeCounters, missed),
                        std::span(reinterpret_cast<uint8_t*>(&missed), 8));
    const uint64_t fresh = (missed > probe->missed_seen ? missed - probe->missed_seen : 0) + probe->missed_by_tracer;
    probe->missed_seen = std::max(missed, probe->missed_seen);
    probe->missed_by_tracer = 0;
    if (fresh != 0 && probe->spec.on_missed) probe->spec.on_missed(fresh);
    uint64_t unwound = probe->unwound_seen;
    (void)process_.read(returns_ + offsetof(agent::AgentReturnState, counters) + probe->index * sizeof(agent::AgentProbeCounters) +
                            offsetof(agent::AgentProbeCounters, discarded),
                        std::span(reinterpret_cast<uint8_t*>(&unwound), 8));
    const uint64_t given_up = (unwound > probe->unwound_seen ? unwound - probe->unwound_seen : 0) + probe->unwound_by_tracer;
    probe->unwound_seen = std::max(unwound, probe->unwound_seen);
    probe->unwound_by_tracer = 0;
    if (given_up != 0 && probe->spec.on_unwound) probe->spec.on_unwound(given_up);
  }
}

}  // namespace xprobe::probe::engine
