#include "probe/engine/trap_engine.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#if defined(__x86_64__)
#include "arch/x86/probe_support/x86_probe_arch.h"
#endif

#include <sys/syscall.h>

namespace xprobe::probe::engine {

using target::Process;
using target::StopEvent;
using target::StopKind;

struct TrapEngine::Site {
  uint64_t address = 0;
  bool planted = false;
  std::unique_ptr<arch::ProbedInstruction> insn;  // the original instruction, how to get past it
  uint64_t slot = 0;
  std::vector<ProbeId> hooks;   // probes and internal breakpoints, oldest first
  uint32_t return_waiters = 0;  // shadow-stack frames that return here
};

struct TrapEngine::Frame {
  ProbeId probe = 0;
  uint64_t function = 0;
  uint64_t return_address = 0;
  uint64_t entry_rsp = 0;
  std::vector<uint64_t> saved;
};

struct TrapEngine::Probe {
  ProbeSpec spec;
  ProbeStats stats;
  std::function<void(const HitContext&)> internal;  // set for internal breakpoints
  bool removed = false;
  uint32_t active = 0;
};

namespace {

constexpr uint64_t kAreaSize = 64 * 1024;

class ProbeMemoryOver final : public arch::ProbeMemory {
 public:
  explicit ProbeMemoryOver(target::Memory& memory) : memory_(memory) {}
  Status read(uint64_t address, std::span<uint8_t> bytes) override { return memory_.read(address, bytes); }
  Status write(uint64_t address, std::span<const uint8_t> bytes) override { return memory_.write(address, bytes); }

 private:
  target::Memory& memory_;
};

bool threads_running(const Process& process) {
  for (const auto& [tid, state] : process.threads()) {
    if (state == target::ThreadState::Running || state == target::ThreadState::Listening) return true;
  }
  return false;
}

}  // namespace

TrapEngine::TrapEngine(Process& process, EngineOptions options) : process_(process), options_(std::move(options)) {
  select_arch();
}

void TrapEngine::select_arch() {
  insn::Arch code = insn::Arch::X86_64;
  if (pid_t tid = process_.any_stopped_thread(); tid != 0) {
    if (auto registers = process_.get_registers(tid)) code = arch::thread_arch(registers->raw);
  }
#if defined(__x86_64__)
  if (options_.decode && code == insn::Arch::X86_64) {
    owned_arch_ = arch::x86::make_probe_arch(code, options_.decode);
    arch_ = owned_arch_.get();
    return;
  }
#endif
  auto chosen = arch::probe_arch(code);
  arch_ = chosen ? *chosen : nullptr;
  arch_refusal_ = chosen ? std::string() : chosen.error().message;
}

TrapEngine::~TrapEngine() {
  if (!detached_) (void)detach();
}

Result<std::unique_ptr<arch::ProbedInstruction>> TrapEngine::decode_at(uint64_t address) {
  std::vector<uint8_t> buffer(arch_->longest_instruction() + 1);
  target::ReadRequest request{address, buffer, 0};
  if (auto read = process_.read_batch(std::span<target::ReadRequest>(&request, 1)); !read) return read.error();
  if (request.copied == 0) return make_error(fmt::format("cannot read code at 0x{:x}", address));
  // Our own breakpoints must not be decoded as part of the instruction.
  for (auto it = sites_.lower_bound(address); it != sites_.end() && it->first < address + request.copied; ++it) {
    if (!it->second->planted) continue;
    const std::vector<uint8_t>& original = it->second->insn->bytes();
    const size_t covered = std::min(arch_->breakpoint().size(), original.size());
    for (size_t i = 0; i < covered && it->first + i < address + request.copied; ++i) {
      buffer[it->first - address + i] = original[i];
    }
  }
  return arch_->plan(std::span<const uint8_t>(buffer.data(), request.copied), address);
}

Result<uint64_t> TrapEngine::allocate_slot(uint64_t near, pid_t tid) {
  const arch::SlotLayout layout = arch_->slot_layout();
  auto within = [&](const SlotArea& area) {
    uint64_t low = std::min(area.start, near), high = std::max(area.start + area.size, near);
    return high - low <= layout.reach && (layout.highest_end == 0 || area.start + area.size <= layout.highest_end);
  };
  for (SlotArea& area : areas_) {
    if (within(area) && area.used + layout.slot_size <= area.size) {
      uint64_t slot = area.start + area.used;
      area.used += layout.slot_size;
      return slot;
    }
  }
  bool resume_others = threads_running(process_);
  if (tid != 0 && !process_.owns(tid)) tid = 0;  // a followed child's thread: map from one of ours
  if (tid == 0) tid = process_.thread_for_remote_call();
  if (tid == 0) {
    if (auto stopped = process_.stop_all(); !stopped) return stopped.error();
    tid = process_.thread_for_remote_call();
  }
  if (tid == 0) return make_error(fmt::format("no thread of process {} can map the slot area (it is exiting)", process_.pid()));
  auto start = process_.remote_mmap_near(tid, near, kAreaSize, PROT_READ | PROT_EXEC, layout.reach - kAreaSize,
                                         layout.highest_end);
  if (resume_others) {
    if (auto resumed = process_.resume_all(current_tid_); !resumed) return resumed.error();
  }
  if (!start) return start.error();
  // The area's first slot holds the stub for later remote system calls.
  for (auto& [pid, child] : followed_) {
    // A slot must exist at the same address in every process that runs this code.
    pid_t child_tid = child->thread_for_remote_call();
    if (child_tid == 0) {
      if (auto stopped = child->stop_all(); !stopped) return stopped.error();
      child_tid = child->thread_for_remote_call();
    }
    uint64_t args[] = {*start, kAreaSize, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | 0x100000, ~uint64_t{0}, 0};
    auto mapped = child->remote_syscall(child_tid, SYS_mmap, args);
    if (!mapped || static_cast<uint64_t>(*mapped) != *start) {
      return make_error(fmt::format("cannot map the slot area at 0x{:x} in followed child {} too", *start, pid));
    }
    if (auto written = child->write(*start, child->syscall_stub_code(child_tid)); !written) return written.error();
    child->set_syscall_stub(*start);
    (void)child->resume_all();
  }
  if (auto written = process_.write(*start, process_.syscall_stub_code(tid)); !written) return written.error();
  process_.set_syscall_stub(*start);
  areas_.push_back(SlotArea{*start, kAreaSize, 2 * layout.slot_size});
  return *start + layout.slot_size;
}

Result<TrapEngine::Site*> TrapEngine::site_for(uint64_t address) {
  auto existing = sites_.find(address);
  if (existing != sites_.end()) {
    if (!existing->second->planted) {
      if (auto planted = plant(*existing->second); !planted) return planted.error();
    }
    return existing->second.get();
  }
  auto fail = [&](const std::string& why) {
    return make_error(fmt::format("Could not insert probe at address 0x{:x} due to: {}", address, why));
  };
  if (companion_ && companion_->covers(address)) return fail("the address lies in the bytes of a jump-optimized probe");
  if (!arch_) return fail(arch_refusal_);
  auto site = std::make_unique<Site>();
  site->address = address;
  auto insn = decode_at(address);
  if (!insn) return fail(insn.error().message);
  site->insn = std::move(*insn);
  const arch::StepPath path = site->insn->path();
  if (path == arch::StepPath::Emulate && site->insn->is_call() && target::uses_shadow_stack(process_.pid())) {
    return fail("the process uses a CET shadow stack, so a call cannot be emulated (the return would fault)");
  }
  if (path == arch::StepPath::OutOfLine) {
    auto slot = allocate_slot(address, current_tid_);
    if (!slot) return fail(slot.error().message);
    auto code = site->insn->slot_code(*slot);
    if (!code) return fail(code.error().message);
    auto slot_address = *slot;
    if (auto written = for_each_address_space([&](Process& p) { return p.write(slot_address, *code); }); !written) {
      return fail(written.error().message);
    }
    site->slot = *slot;
  }
  if (auto planted = plant(*site); !planted) return fail(planted.error().message);
  Site* raw = site.get();
  sites_[address] = std::move(site);
  return raw;
}

bool TrapEngine::has_site_in(uint64_t begin, uint64_t end) const {
  auto it = sites_.lower_bound(begin);
  return it != sites_.end() && it->first < end;
}

Status TrapEngine::for_each_address_space(const std::function<Status(Process&)>& action) {
  if (process_.alive()) {
    if (auto done = action(process_); !done) return done;
  }
  for (auto& [pid, child] : followed_) {
    if (!child->alive()) continue;
    if (auto done = action(*child); !done) return done;
  }
  return {};
}

Status TrapEngine::plant(Site& site) {
  const std::span<const uint8_t> breakpoint = arch_->breakpoint();
  if (auto written = for_each_address_space([&](Process& p) { return p.write(site.address, breakpoint); }); !written) {
    return written;
  }
  site.planted = true;
  retired_.erase(site.address);
  return {};
}

Status TrapEngine::unplant(Site& site) {
  if (!site.planted) return {};
  site.planted = false;
  retired_.insert(site.address);
  return for_each_address_space([&](Process& p) -> Status {
    // A program that rewrote its own code over our breakpoint keeps what it wrote.
    const std::span<const uint8_t> breakpoint = arch_->breakpoint();
    std::vector<uint8_t> now(breakpoint.size());
    if (!p.read(site.address, now) || !std::equal(now.begin(), now.end(), breakpoint.begin())) return {};
    return p.write(site.address, site.insn->bytes_under_breakpoint(breakpoint.size()));
  });
}

void TrapEngine::release_site_if_unused(uint64_t address) {
  auto it = sites_.find(address);
  if (it == sites_.end()) return;
  Site& site = *it->second;
  if (site.return_waiters == 0 && site.hooks.empty()) (void)unplant(site);  // kept: its slot is reused
}

Result<ProbeId> TrapEngine::add_probe(ProbeSpec spec) {
  auto site = site_for(spec.address);
  if (!site) return site.error();
  ProbeId id = next_id_++;
  auto probe = std::make_unique<Probe>();
  if (spec.max_active == 0) spec.max_active = kDefaultMaxActive;
  probe->spec = std::move(spec);
  probes_[id] = std::move(probe);
  (*site)->hooks.push_back(id);
  return id;
}

Result<ProbeId> TrapEngine::add_internal_breakpoint(uint64_t address, std::function<void(const HitContext&)> callback) {
  ProbeSpec spec;
  spec.address = address;
  auto id = add_probe(std::move(spec));
  if (!id) return id.error();
  probes_[*id]->internal = std::move(callback);
  return id;
}

Status TrapEngine::remove_probe(ProbeId id) {
  auto probe = probes_.find(id);
  if (probe == probes_.end() || probe->second->removed) return make_error(fmt::format("no probe {}", id));
  probe->second->removed = true;
  uint64_t address = probe->second->spec.address;
  auto site = sites_.find(address);
  if (site != sites_.end()) {
    std::erase(site->second->hooks, id);
    release_site_if_unused(address);
  }
  // Outstanding return instances stay on the shadow stacks until they return: their
  // return events are simply not reported (the probe is gone).
  return {};
}

ProbeStats TrapEngine::stats(ProbeId id) const {
  auto probe = probes_.find(id);
  return probe == probes_.end() ? ProbeStats{} : probe->second->stats;
}

std::map<ProbeId, ProbeStats> TrapEngine::all_stats() const {
  std::map<ProbeId, ProbeStats> result;
  for (const auto& [id, probe] : probes_) {
    if (!probe->internal) result[id] = probe->stats;
  }
  return result;
}

void TrapEngine::drop_frame(const Frame& frame, bool discarded) {
  auto probe = probes_.find(frame.probe);
  if (probe != probes_.end()) {
    if (probe->second->active > 0) --probe->second->active;
    if (discarded && !probe->second->removed) ++probe->second->stats.discarded;
  }
  // The return site stays planted when its last frame is gone: the same call site returns
  // there again soon, and re-planting it costs two memory writes per call. A stop at a site
  // without waiters is stepped over like any other.
  auto site = sites_.find(frame.return_address);
  if (site != sites_.end() && site->second->return_waiters > 0) --site->second->return_waiters;
}

void TrapEngine::discard_frames_below(pid_t tid, uint64_t rsp) {
  auto stack = shadow_stacks_.find(tid);
  if (stack == shadow_stacks_.end()) return;
  while (!stack->second.empty() && stack->second.back().entry_rsp < rsp) {
    Frame frame = std::move(stack->second.back());
    stack->second.pop_back();
    drop_frame(frame, true);
  }
}

void TrapEngine::return_site_hit(pid_t tid, uint64_t address, target::Registers& registers, const HitContext& context) {
  auto stack = shadow_stacks_.find(tid);
  if (stack == shadow_stacks_.end()) return;
  uint64_t rsp = sp(registers);
  // Innermost frames are at the back. Every frame entered at least the shortest return's pop
  // below the current rsp is over; the outermost of those is the one returning now, the others
  // were unwound past.
  std::optional<Frame> returning;
  while (!stack->second.empty() && stack->second.back().entry_rsp + arch_->shortest_return_pop() <= rsp) {
    if (returning) drop_frame(*returning, true);
    returning = std::move(stack->second.back());
    stack->second.pop_back();
  }
  if (!returning) return;
  bool matches = returning->return_address == address && rsp - returning->entry_rsp <= arch_->longest_return_pop();
  if (matches) {
    auto probe = probes_.find(returning->probe);
    if (probe != probes_.end() && !probe->second->removed) {
      ++probe->second->stats.hits;
      if (probe->second->spec.on_return) {
        probe->second->spec.on_return(ReturnContext{context, returning->function, address, returning->saved});
      }
    }
  }
  drop_frame(*returning, !matches);
}

Status TrapEngine::resume_past(Process& process, pid_t tid, Site& site, target::Registers& registers) {
  if (site.insn->path() == arch::StepPath::OutOfLine) {
    set_ip(registers, site.slot);
  } else {
    ProbeMemoryOver memory(process);
    if (!site.insn->emulate(registers.raw, memory)) {
      // Cannot happen for a planned instruction unless its memory operand is bad; let the
      // original instruction run (and fault) exactly as it would untraced.
      (void)unplant(site);
      set_ip(registers, site.address);
    }
  }
  if (auto set = process.set_registers(tid, registers); !set) return set;
  return process.resume(tid);
}

Status TrapEngine::handle_trap(Process& process, const StopEvent& event, bool report) {
  uint64_t address = event.address;
  pid_t tid = event.tid;
  auto found = sites_.find(address);
  if (found == sites_.end() || !found->second->planted) {
    if (retired_.count(address)) {
      // Our breakpoint, removed after this thread had already trapped on it.
      const std::span<const uint8_t> breakpoint = arch_->breakpoint();
      std::vector<uint8_t> now(breakpoint.size());
      if (process.read(address, now) && !std::equal(now.begin(), now.end(), breakpoint.begin())) {
        auto registers = process.get_registers(tid);
        if (!registers) return registers.error();
        set_ip(*registers, address);
        if (auto set = process.set_registers(tid, *registers); !set) return set;
        return process.resume(tid);
      }
    }
    return process.resume(tid, SIGTRAP);  // the program's own int3
  }
  Result<target::Registers> registers = event.has_registers ? Result<target::Registers>(event.registers)
                                                             : process.get_registers(tid);
  if (!registers) return registers.error();
  set_ip(*registers, address);
  // Until it is resumed, the thread sits one byte into the probed instruction: should anything
  // end tracing before that (a detach from a callback, an error), the detach puts it back.
  unresumed_traps_[tid] = address;
  if (auto replay = replays_.find(tid); replay != replays_.end()) {
    if (replay->second == std::make_pair(address, sp(*registers))) report = false;
    replays_.erase(replay);
  }
  if (report) {
    HitContext context{process, tid, address, *registers, process};
    current_tid_ = tid;
    if (found->second->return_waiters > 0) return_site_hit(tid, address, *registers, context);
    std::vector<ProbeId> hooks = found->second->hooks;  // callbacks may add or remove probes
    for (ProbeId id : hooks) {
      auto probe_it = probes_.find(id);
      if (probe_it == probes_.end() || probe_it->second->removed) continue;
      Probe& probe = *probe_it->second;
      if (probe.internal) {
        probe.internal(context);
        continue;
      }
      if (!probe.spec.is_return) {
        ++probe.stats.hits;
        if (probe.spec.on_hit) probe.spec.on_hit(context);
        continue;
      }
      if (probe.active >= probe.spec.max_active) {
        ++probe.stats.misses;
        continue;
      }
      ProbeMemoryOver memory(process);
      auto return_address = arch_->return_address_at_entry(registers->raw, memory);
      if (!return_address) {
        ++probe.stats.misses;
        continue;
      }
      // Frames entered at or below this rsp are over (a live caller's frame lies above);
      // dropping them may unplant a return site, so that comes before planting ours.
      discard_frames_below(tid, sp(*registers) + 1);
      auto return_site = site_for(*return_address);
      if (!return_site) {
        ++probe.stats.misses;
        continue;
      }
      Frame frame;
      frame.probe = id;
      frame.function = address;
      frame.return_address = *return_address;
      frame.entry_rsp = sp(*registers);
      if (probe.spec.save_at_entry) frame.saved = probe.spec.save_at_entry(context);
      ++(*return_site)->return_waiters;
      ++probe.active;
      shadow_stacks_[tid].push_back(std::move(frame));
    }
    current_tid_ = 0;
    if (detached_) return {};  // a callback detached: the detach put the thread back already
  }
  unresumed_traps_.erase(tid);
  found = sites_.find(address);
  if (found == sites_.end() || !found->second->planted) {
    // A callback removed the last probe here: the original instruction is back in place.
    if (auto set = process.set_registers(tid, *registers); !set) return set;
    return process.resume(tid);
  }
  return resume_past(process, tid, *found->second, *registers);
}

const TrapEngine::Site* TrapEngine::site_of_slot_ip(uint64_t ip) const {
  for (const auto& [address, site] : sites_) {
    if (site->slot != 0 && ip >= site->slot && ip < site->slot + arch_->slot_layout().slot_size) return site.get();
  }
  return nullptr;
}

Status TrapEngine::move_thread_out_of_slot(Process& process, pid_t tid, bool remember_replay) {
  auto registers = process.get_registers(tid);
  if (!registers) return {};
  const Site* site = site_of_slot_ip(ip(*registers));
  if (!site) return {};
  uint64_t original = site->insn->original_address_for_slot_ip(ip(*registers), site->slot);
  if (original == 0) return {};
  // Back at the probed address the thread will trap there again once the handler returns:
  // that is the same hit, not a new one.
  if (remember_replay && original == site->address) replays_[tid] = {site->address, sp(*registers)};
  set_ip(*registers, original);
  return process.set_registers(tid, *registers);
}

Status TrapEngine::move_out_of_slots(Process& process) {
  for (const auto& [tid, state] : process.threads()) {
    if (state != target::ThreadState::Stopped) continue;
    auto registers = process.get_registers(tid);
    if (!registers) continue;
    const Site* site = site_of_slot_ip(ip(*registers));
    if (!site) continue;
    uint64_t original = site->insn->original_address_for_slot_ip(ip(*registers), site->slot);
    if (original == 0) continue;
    set_ip(*registers, original);
    if (auto set = process.set_registers(tid, *registers); !set) return set;
  }
  return {};
}

Status TrapEngine::on_fork(const StopEvent& event) {
  auto child = Process::adopt_child(event.new_pid);
  if (!child) return {};  // it died already
  if (event.kind == StopKind::Vfork) {
    // It shares our memory (and breakpoints) until it execs or exits: keep handling its hits.
    vfork_children_[event.new_pid] = std::move(*child);
    return vfork_children_[event.new_pid]->resume_all();
  }
  if (options_.follow_fork && event.kind == StopKind::Fork) {
    // Its memory is a copy of ours: same breakpoints, same slots. Trace it as it is.
    pid_t pid = event.new_pid;
    followed_[pid] = std::move(*child);
    return followed_[pid]->resume_all();
  }
  // A forked child carries a copy of every breakpoint: put the original bytes back. Its
  // forking thread may sit in a slot (fork executed out of line); the slot area is copied
  // too, and its jmp leads back to the original code.
  for (auto& [address, site] : sites_) {
    if (site->planted) (void)(*child)->write(address, site->insn->bytes_under_breakpoint(arch_->breakpoint().size()));
  }
  if (companion_) (void)companion_->restore_in(**child);
  (void)move_out_of_slots(**child);
  return (*child)->detach();
}

Status TrapEngine::on_vfork_child_event(pid_t tid) {
  auto it = vfork_children_.find(tid);
  if (it == vfork_children_.end()) return {};
  Process& child = *it->second;
  auto event = child.next_event();
  if (!event || !*event) return {};
  const StopEvent& e = **event;
  switch (e.kind) {
    case StopKind::Trap:
      return handle_trap(child, e, false);
    case StopKind::Exec:
      (void)child.detach();  // a new image without breakpoints
      vfork_children_.erase(it);
      return {};
    case StopKind::Exited:
    case StopKind::Killed:
      vfork_children_.erase(it);
      return {};
    case StopKind::Signal:
      (void)move_out_of_slots(child);
      return child.resume(e.tid, e.signal);
    case StopKind::Fork:
    case StopKind::Vfork:
      (void)on_fork(e);
      return child.resume(e.tid);
    case StopKind::ThreadExited:
    case StopKind::Foreign:
      return {};
    default:
      return child.resume(e.tid);
  }
}

Status TrapEngine::on_followed_event(pid_t tid) {
  auto owner = std::find_if(followed_.begin(), followed_.end(), [&](const auto& entry) { return entry.second->owns(tid); });
  if (owner == followed_.end()) return {};
  Process& child = *owner->second;
  auto event = child.next_event();
  if (!event || !*event) return {};
  const StopEvent& e = **event;
  switch (e.kind) {
    case StopKind::Trap:
      return handle_trap(child, e, true);
    case StopKind::Signal:
      if (auto moved = move_thread_out_of_slot(child, e.tid, true); !moved) return moved;
      return child.resume(e.tid, e.signal);
    case StopKind::Fork:
    case StopKind::Vfork:
      (void)on_fork(e);
      return child.resume(e.tid);
    case StopKind::Exec:
      (void)child.detach();
      followed_.erase(owner);
      return {};
    case StopKind::Exited:
    case StopKind::Killed:
      followed_.erase(owner);
      return {};
    case StopKind::ThreadExited: {
      replays_.erase(e.tid);
      unresumed_traps_.erase(e.tid);
      auto stack = shadow_stacks_.find(e.tid);
      if (stack != shadow_stacks_.end()) {
        std::vector<Frame> frames = std::move(stack->second);
        shadow_stacks_.erase(stack);
        for (const Frame& frame : frames) drop_frame(frame, true);
      }
      return {};
    }
    case StopKind::Foreign:
      return {};
    default:
      return child.resume(e.tid);
  }
}

Status TrapEngine::on_exec() {
  // The old image, its breakpoints and our slot areas are gone.
  sites_.clear();
  areas_.clear();
  retired_.clear();
  shadow_stacks_.clear();
  replays_.clear();
  unresumed_traps_.clear();
  for (auto& [id, probe] : probes_) {
    probe->removed = true;
    probe->active = 0;
  }
  process_.set_syscall_stub(0);
  select_arch();  // a 64-bit program may exec a 32-bit one, and back
  if (exec_handler_) exec_handler_(*this);
  return {};
}

Result<RunResult> TrapEngine::run() {
  if (auto resumed = process_.resume_all(); !resumed) return resumed.error();
  for (;;) {
    auto next = process_.next_event();
    if (!next) return next.error();
    if (!*next) {
      if (auto undone = detach(); !undone) return undone.error();
      return RunResult{RunEnd::Detached, 0, 0};
    }
    const StopEvent& event = **next;
    Status handled;
    switch (event.kind) {
      case StopKind::Trap:
        handled = handle_trap(process_, event, true);
        break;
      case StopKind::Signal:
        if (companion_ && companion_->handle_own_signal(event.tid, event.signal)) {
          handled = process_.resume(event.tid);
          break;
        }
        // A handler must see original addresses, never a slot.
        handled = move_thread_out_of_slot(process_, event.tid, true);
        if (handled) handled = process_.resume(event.tid, event.signal);
        break;
      case StopKind::NewThread:
        handled = process_.resume(event.tid);
        break;
      case StopKind::Fork:
      case StopKind::Vfork:
        handled = on_fork(event);
        if (handled) handled = process_.resume(event.tid);
        break;
      case StopKind::Exec:
        handled = on_exec();
        if (handled) handled = process_.resume(event.tid);
        break;
      case StopKind::ThreadExited: {
        replays_.erase(event.tid);
        unresumed_traps_.erase(event.tid);
        auto stack = shadow_stacks_.find(event.tid);
        if (stack != shadow_stacks_.end()) {
          std::vector<Frame> frames = std::move(stack->second);
          shadow_stacks_.erase(stack);
          for (const Frame& frame : frames) drop_frame(frame, true);
        }
        break;
      }
      case StopKind::Exited:
      case StopKind::Killed:
        // Children we still trace outlive the program: leave them clean and untraced (else
        // PTRACE_O_EXITKILL would take them down with xprobe).
        (void)detach();
        if (event.kind == StopKind::Exited) return RunResult{RunEnd::Exited, event.exit_status, 0};
        return RunResult{RunEnd::Killed, 0, event.signal};
      case StopKind::Foreign:
        handled = on_vfork_child_event(event.tid);
        if (handled) handled = on_followed_event(event.tid);
        break;
    }
    if (!handled) {
      // Killed from outside while we handled its stop: not an error of ours; its end comes next.
      if (target::process_is_ending(process_.pid())) continue;
      return handled.error();
    }
    if (detached_) return RunResult{RunEnd::Detached, 0, 0};  // a callback detached
  }
}

Status TrapEngine::detach_one(Process& process) {
  if (auto stopped = process.stop_all(); !stopped) return stopped;
  for (const auto& [tid, address] : unresumed_traps_) {
    if (!process.owns(tid)) continue;
    auto registers = process.get_registers(tid);
    if (registers && ip(*registers) == arch_->ip_at_breakpoint_stop(address)) {
      set_ip(*registers, address);
      (void)process.set_registers(tid, *registers);
    }
  }
  std::deque<StopEvent> events = process.take_pending_events();
  for (const StopEvent& event : events) {
    switch (event.kind) {
      case StopKind::Trap:
        if (sites_.count(event.address) || retired_.count(event.address)) {
          // A hit not handled yet: undo the trap, the original instruction will run.
          auto registers = process.get_registers(event.tid);
          if (registers) {
            set_ip(*registers, event.address);
            (void)process.set_registers(event.tid, *registers);
          }
        } else {
          process.push_pending_event(event);
        }
        break;
      case StopKind::Signal:
        process.push_pending_event(event);  // delivered by the detach
        break;
      case StopKind::Fork:
      case StopKind::Vfork:
      {
        StopEvent as_fork = event;
        as_fork.kind = StopKind::Fork;  // never followed while detaching
        (void)on_fork(as_fork);
      }
        break;
      case StopKind::Exec:
        if (&process == &process_) sites_.clear();  // nothing of ours in the new image
        break;
      default:
        break;
    }
  }
  return {};
}

Status TrapEngine::detach() {
  if (detached_) return {};
  detached_ = true;
  options_.follow_fork = false;  // a fork seen while detaching is cleaned, not followed
  // Everything stops before any byte is restored, so no thread runs half-restored code.
  if (process_.alive()) {
    if (auto stopped = detach_one(process_); !stopped) return stopped;
  }
  for (auto& [pid, child] : followed_) (void)detach_one(*child);
  if (companion_ && process_.alive()) {
    companion_->drain();
    (void)companion_->restore_in(process_);
  }
  for (auto& [address, site] : sites_) (void)unplant(*site);
  for (auto& [pid, child] : vfork_children_) {
    (void)child->stop_all();
    (void)move_out_of_slots(*child);
    (void)child->detach();
  }
  vfork_children_.clear();
  for (auto& [pid, child] : followed_) {
    (void)move_out_of_slots(*child);
    (void)child->detach();
  }
  followed_.clear();
  if (!process_.alive()) return {};
  if (auto moved = move_out_of_slots(process_); !moved) return moved;
  return process_.detach();
}

}  // namespace xprobe::probe::engine
