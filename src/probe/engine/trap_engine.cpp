#include "probe/engine/trap_engine.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "arch/registry.h"
#include "probe/agent/return_frames.h"
#include "supervisor/all_threads_stopped.h"

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
  uint64_t entry_sp = 0;
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

}  // namespace

TrapEngine::TrapEngine(supervisor::Supervisor& supervisor, ProbeArchChooser choose_arch)
    : supervisor_(supervisor), process_(supervisor.process()), choose_arch_(std::move(choose_arch)) {
  if (!choose_arch_) choose_arch_ = arch::probe_arch;
  select_arch();
  supervisor_.join(*this);
}

void TrapEngine::select_arch() {
  auto chosen = choose_arch_(supervisor_.arch());
  arch_ = chosen ? *chosen : nullptr;
  arch_refusal_ = chosen ? std::string() : chosen.error().message;
}

TrapEngine::~TrapEngine() { supervisor_.leave(*this); }

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
  const AreaReach reach{layout.reach, layout.highest_end};
  if (auto slot = areas_.take(near, layout.slot_size, reach)) return *slot;
  // The area is mapped by a system call run in one of the process's threads.
  supervisor::AllThreadsStopped stopped(process_, supervisor_.handling_tid());
  if (!stopped.status()) return stopped.status().error();
  if (tid != 0 && !process_.owns(tid)) tid = 0;  // a followed child's thread: map from one of ours
  if (tid == 0) tid = process_.thread_for_remote_call();
  if (tid == 0) return make_error(fmt::format("no thread of process {} can map the slot area (it is exiting)", process_.pid()));
  auto start = process_.remote_mmap_near(tid, near, kAreaSize, PROT_READ | PROT_EXEC, layout.reach - kAreaSize,
                                         layout.highest_end);
  if (!start) return start.error();
  // A slot must exist at the same address in every process that runs this code.
  for (Process* child : supervisor_.followed_children()) {
    supervisor::AllThreadsStopped child_stopped(*child, supervisor_.handling_tid());
    const pid_t child_tid = child->thread_for_remote_call();
    auto mapped = child_tid == 0 ? Result<uint64_t>(make_error("no thread to map it from"))
                                 : child->remote_mmap_at(child_tid, *start, kAreaSize, PROT_READ | PROT_EXEC);
    if (!mapped || *mapped != *start)
      return make_error(fmt::format("cannot map the slot area at 0x{:x} in followed child {} too", *start, child->pid()));
    if (auto written = child->install_syscall_stub(child_tid, *start); !written) return written.error();
  }
  // The area's first slots hold the stub for later remote system calls.
  auto stub = process_.syscall_stub_code(tid);
  if (!stub) return stub.error();
  if (auto written = process_.install_syscall_stub(tid, *start); !written) return written.error();
  areas_.add(*start, kAreaSize, (stub->size() + layout.slot_size - 1) / layout.slot_size * layout.slot_size);
  auto slot = areas_.take(near, layout.slot_size, reach);
  if (!slot) return make_error("the new slot area has no room for a slot");
  return *slot;
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
  if (!arch_) return fail(arch_refusal_);
  if (supervisor_.patches().claimed_by_other(*this, address, address + arch_->breakpoint().size()))
    return fail("the address lies in the bytes of a jump-optimized probe");
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
    if (auto written = supervisor_.for_each_address_space([&](Process& p) { return p.write(slot_address, *code); }); !written) {
      return fail(written.error().message);
    }
    site->slot = *slot;
  }
  if (auto planted = plant(*site); !planted) return fail(planted.error().message);
  Site* raw = site.get();
  sites_[address] = std::move(site);
  return raw;
}

Status TrapEngine::plant(Site& site) {
  const std::span<const uint8_t> breakpoint = arch_->breakpoint();
  const uint64_t end = site.address + breakpoint.size();
  if (supervisor_.patches().claimed_by_other(*this, site.address, end))
    return make_error("the address lies in the bytes of a jump-optimized probe");
  if (auto written = supervisor_.for_each_address_space([&](Process& p) { return p.write(site.address, breakpoint); });
      !written) {
    return written;
  }
  site.planted = true;
  supervisor_.patches().claim(*this, site.address, end);
  retired_.erase(site.address);
  std::erase_if(late_stops_resumed_, [&](const auto& entry) { return entry.second == site.address; });
  return {};
}

Status TrapEngine::unplant(Site& site) {
  if (!site.planted) return {};
  site.planted = false;
  supervisor_.patches().release(*this, site.address);
  retired_.insert(site.address);
  return supervisor_.for_each_address_space([&](Process& p) -> Status {
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
  // The site itself stays: its slot is reused if a probe comes back. Bytes that cannot be
  // written back belong to a process that is gone.
  if (site.return_waiters == 0 && site.hooks.empty()) static_cast<void>(unplant(site));
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
  // Return sites nobody waits at stay planted for the next call (drop_frame): with a probe
  // gone they go now; one that another return probe needs again is planted again then.
  // Outstanding return instances stay on the shadow stacks until they return or are unwound
  // (they still tell which frame returns where): their returns are not reported, and the last
  // of them lets its return site go.
  for (auto& [site_address, other] : sites_)
    if (other->planted && other->return_waiters == 0 && other->hooks.empty()) release_site_if_unused(site_address);
  return {};
}

ProbeStats TrapEngine::stats(ProbeId id) const {
  auto probe = probes_.find(id);
  return probe == probes_.end() ? ProbeStats{} : probe->second->stats;
}

void TrapEngine::drop_frame(const Frame& frame, bool discarded) {
  bool probe_removed = false;
  auto probe = probes_.find(frame.probe);
  if (probe != probes_.end()) {
    if (probe->second->active > 0) --probe->second->active;
    if (discarded && !probe->second->removed) ++probe->second->stats.discarded;
    probe_removed = probe->second->removed;
  }
  // The return site stays planted when its last frame is gone: the same call site returns
  // there again soon, and re-planting it costs two memory writes per call. A stop at a site
  // without waiters is stepped over like any other. Only a removed probe's last frame lets
  // its site go.
  auto site = sites_.find(frame.return_address);
  if (site == sites_.end() || site->second->return_waiters == 0) return;
  if (--site->second->return_waiters == 0 && probe_removed) release_site_if_unused(frame.return_address);
}

agent::FrameOwner TrapEngine::frame_owner(target::Process& process, pid_t tid, const target::Registers& registers) {
  return agent::frame_owner(goroutine_frames_, static_cast<uint64_t>(tid), sp(registers), registers.goroutine(),
                            [&process](uint64_t address, uint64_t* words, uint32_t count) {
                              return static_cast<bool>(process.read(
                                  address, std::span(reinterpret_cast<uint8_t*>(words), size_t{count} * 8)));
                            });
}

void TrapEngine::discard_frames_below(const agent::FrameOwner& owner, uint64_t stack_pointer) {
  auto stack = shadow_stacks_.find(owner.key);
  if (stack == shadow_stacks_.end()) return;
  while (!stack->second.empty() && stack->second.back().entry_sp < stack_pointer) {
    Frame frame = std::move(stack->second.back());
    stack->second.pop_back();
    drop_frame(frame, true);
  }
}

void TrapEngine::return_site_hit(pid_t tid, uint64_t address, target::Registers& registers, const HitContext& context) {
  const agent::FrameOwner owner = frame_owner(context.process, tid, registers);
  auto stack = shadow_stacks_.find(owner.key);
  if (stack == shadow_stacks_.end()) return;
  const uint64_t stack_pointer = owner.sp;
  // Innermost frames are at the back; the matching rule is the agent's (return_frames.h).
  struct ShadowStack {
    std::vector<Frame>& frames;
    bool empty() const { return frames.empty(); }
    const Frame& top() const { return frames.back(); }
    void pop_into(Frame& frame) {
      frame = std::move(frames.back());
      frames.pop_back();
    }
  } frames{stack->second};
  Frame returning_frame;
  const agent::ReturnMatch match =
      agent::match_return(frames, stack_pointer, address, arch_->shortest_return_pop(), arch_->longest_return_pop(),
                          returning_frame, [&](const Frame& over) { drop_frame(over, true); });
  if (match == agent::ReturnMatch::NoFrameOver) return;
  const Frame* returning = &returning_frame;
  const bool matches = match == agent::ReturnMatch::Returned;
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
  // Goroutines come and go by the million: an empty stack of one is forgotten.
  if ((owner.key & agent::kGoroutineKey) != 0) {
    if (auto left = shadow_stacks_.find(owner.key); left != shadow_stacks_.end() && left->second.empty()) shadow_stacks_.erase(left);
  }
}

Status TrapEngine::resume_past(Process& process, pid_t tid, Site& site, target::Registers& registers) {
  if (site.insn->path() == arch::StepPath::OutOfLine) {
    set_ip(registers, site.slot);
  } else {
    ProbeMemoryOver memory(process);
    if (!site.insn->emulate(registers.raw, memory)) {
      // Cannot happen for a planned instruction unless its memory operand is bad; let the
      // original instruction run (and fault) exactly as it would untraced. Should the
      // breakpoint not come out, the thread traps here again and is handled again: no harm.
      static_cast<void>(unplant(site));
      set_ip(registers, site.address);
    }
  }
  if (auto set = process.set_registers(tid, registers); !set) return set;
  return process.resume(tid);
}

Result<supervisor::TrapDisposition> TrapEngine::on_trap(const supervisor::TrapStop& stop) {
  using supervisor::TrapDisposition;
  Process& process = stop.space;
  const StopEvent& event = stop.event;
  bool report = stop.report;
  uint64_t address = event.address;
  pid_t tid = event.tid;
  auto found = sites_.find(address);
  if (found == sites_.end() || !found->second->planted) {
    if (!retired_.count(address) || !arch_) return TrapDisposition::NotMine;
    // Our breakpoint, removed after this thread had stopped on it: the original instruction is
    // back, and the thread, whose instruction pointer is still on it, runs it once resumed.
    const std::span<const uint8_t> breakpoint = arch_->breakpoint();
    std::vector<uint8_t> now(breakpoint.size());
    if (!process.read(address, now) || std::equal(now.begin(), now.end(), breakpoint.begin()))
      return TrapDisposition::NotMine;  // someone else's breakpoint there now: the program's
    // x86's breakpoint stop (the SIGSEGV of a #GP) is also what that instruction's own fault
    // looks like: a thread that stops here again without a hit in between is faulting itself.
    auto resumed_here = late_stops_resumed_.find(tid);
    if (resumed_here != late_stops_resumed_.end() && resumed_here->second == address) {
      late_stops_resumed_.erase(resumed_here);
      return TrapDisposition::NotMine;
    }
    late_stops_resumed_[tid] = address;
    if (auto resumed = process.resume(tid); !resumed) return resumed.error();
    return TrapDisposition::Handled;
  }
  late_stops_resumed_.erase(tid);
  Result<target::Registers> registers = event.has_registers ? Result<target::Registers>(event.registers)
                                                             : process.get_registers(tid);
  if (!registers) return registers.error();
  if (!replays_.empty()) {
    const agent::FrameOwner owner = frame_owner(process, tid, *registers);
    if (auto replays = replays_.find(owner.key); replays != replays_.end()) {
      // The replay of the innermost interrupted hit, or a hit inside its handler (below it on
      // the stack: the replay waits), or the thread is above it: the handler left by a longjmp,
      // the replay will not come.
      auto& pending = replays->second;
      const uint64_t stack_pointer = owner.sp;
      while (!pending.empty() && pending.back().second < stack_pointer) pending.pop_back();
      if (!pending.empty() && pending.back() == std::make_pair(address, stack_pointer)) {
        report = false;
        pending.pop_back();
      }
      if (pending.empty()) replays_.erase(replays);
    }
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
      // Frames entered at or below this stack pointer are over (a live caller's frame lies
      // above); dropping them may unplant a return site, so that comes before planting ours.
      const agent::FrameOwner owner = frame_owner(process, tid, *registers);
      discard_frames_below(owner, owner.sp + 1);
      auto return_site = site_for(*return_address);
      if (!return_site) {
        ++probe.stats.misses;
        continue;
      }
      Frame frame;
      frame.probe = id;
      frame.function = address;
      frame.return_address = *return_address;
      frame.entry_sp = owner.sp;
      if (probe.spec.save_at_entry) frame.saved = probe.spec.save_at_entry(context);
      ++(*return_site)->return_waiters;
      ++probe.active;
      shadow_stacks_[owner.key].push_back(std::move(frame));
    }
    current_tid_ = 0;
    if (supervisor_.detached()) return TrapDisposition::Handled;  // a callback detached: the thread is back already
  }
  found = sites_.find(address);
  if (found == sites_.end() || !found->second->planted) {
    // A callback removed the last probe here: the original instruction is back in place, under
    // the thread's instruction pointer.
    if (auto resumed = process.resume(tid); !resumed) return resumed.error();
    return TrapDisposition::Handled;
  }
  if (auto resumed = resume_past(process, tid, *found->second, *registers); !resumed) return resumed.error();
  return TrapDisposition::Handled;
}

const TrapEngine::Site* TrapEngine::site_of_slot_ip(uint64_t ip) const {
  for (const auto& [address, site] : sites_) {
    if (site->slot != 0 && ip >= site->slot && ip < site->slot + arch_->slot_layout().slot_size) return site.get();
  }
  return nullptr;
}

Status TrapEngine::move_thread_out_of_slot(Process& process, pid_t tid, bool remember_replay) {
  if (!arch_) return {};
  auto registers = process.get_registers(tid);
  if (!registers) return {};
  const Site* site = site_of_slot_ip(ip(*registers));
  if (!site) return {};
  uint64_t original = site->insn->original_address_for_slot_ip(ip(*registers), site->slot);
  if (original == 0) return {};
  // Back at the probed address the thread will trap there again once the handler returns:
  // that is the same hit, not a new one.
  if (remember_replay && original == site->address) {
    const agent::FrameOwner owner = frame_owner(process, tid, *registers);
    replays_[owner.key].emplace_back(site->address, owner.sp);
  }
  set_ip(*registers, original);
  return process.set_registers(tid, *registers);
}

Status TrapEngine::before_signal(Process& space, pid_t tid) {
  // A handler must see original addresses, never a slot.
  return move_thread_out_of_slot(space, tid, true);
}

Status TrapEngine::release_threads(Process& space) {
  if (!arch_) return {};
  for (const auto& [tid, state] : space.threads()) {
    if (state != target::ThreadState::Stopped) continue;
    auto registers = space.get_registers(tid);
    if (!registers) continue;
    const Site* site = site_of_slot_ip(ip(*registers));
    if (!site) continue;
    uint64_t original = site->insn->original_address_for_slot_ip(ip(*registers), site->slot);
    if (original == 0) continue;
    set_ip(*registers, original);
    if (auto set = space.set_registers(tid, *registers); !set) return set;
  }
  return {};
}

void TrapEngine::clean_forked_child(Process& child) {
  // Its forking thread may sit in a slot (fork executed out of line); the slot area is copied
  // too, and its jump leads back to the original code (release_threads moves it there). A
  // byte that cannot be written back concerns a child that is being let go anyway.
  if (!arch_) return;
  std::vector<target::WritePiece> pieces;
  for (auto& [address, site] : sites_)
    if (site->planted) pieces.push_back({address, site->insn->bytes_under_breakpoint(arch_->breakpoint().size())});
  static_cast<void>(child.write_pieces(pieces));  // the child is at its first stop
}

void TrapEngine::on_thread_exited(pid_t tid) {
  replays_.erase(static_cast<uint64_t>(tid));
  late_stops_resumed_.erase(tid);
  auto stack = shadow_stacks_.find(static_cast<uint64_t>(tid));
  if (stack == shadow_stacks_.end()) return;
  std::vector<Frame> frames = std::move(stack->second);
  shadow_stacks_.erase(stack);
  for (const Frame& frame : frames) drop_frame(frame, true);
}

void TrapEngine::on_exec() {
  // The old image, its breakpoints and our slot areas are gone.
  sites_.clear();
  areas_.clear();
  retired_.clear();
  shadow_stacks_.clear();
  replays_.clear();
  late_stops_resumed_.clear();
  for (auto& [id, probe] : probes_) {
    probe->removed = true;
    probe->active = 0;
  }
  select_arch();  // a 64-bit program may exec a 32-bit one, and back
}

bool TrapEngine::undo_trap(Process& /*space*/, const StopEvent& event) {
  // A hit not handled yet: the thread is still on the breakpoint's address (a breakpoint stop
  // leaves it there), where the original instruction will be after the detach.
  return arch_ && (sites_.count(event.address) || retired_.count(event.address));
}

Status TrapEngine::remove_patches() {
  // Every breakpoint goes, in every process that has them; one that cannot be written back
  // (a process that is gone) must not keep the others in. The supervisor's detach has stopped
  // every thread: each process's breakpoints are checked in one batched read and go back a
  // run of pages at a time (10,000 breakpoints were 20,000 system calls).
  std::vector<Site*> planted;
  for (auto& [address, site] : sites_)
    if (site->planted) planted.push_back(site.get());
  if (planted.empty()) return {};
  const std::span<const uint8_t> breakpoint = arch_->breakpoint();
  static_cast<void>(supervisor_.for_each_address_space([&](Process& p) -> Status {
    std::vector<uint8_t> now(planted.size() * breakpoint.size());
    std::vector<target::ReadRequest> reads;
    reads.reserve(planted.size());
    for (size_t i = 0; i < planted.size(); ++i)
      reads.push_back({planted[i]->address, std::span<uint8_t>(now).subspan(i * breakpoint.size(), breakpoint.size()), 0});
    if (!p.read_batch(reads)) return {};  // gone
    std::vector<target::WritePiece> pieces;
    for (size_t i = 0; i < planted.size(); ++i) {
      // A program that rewrote its own code over our breakpoint keeps what it wrote.
      if (reads[i].copied != breakpoint.size() || !std::equal(breakpoint.begin(), breakpoint.end(), reads[i].buffer.begin()))
        continue;
      pieces.push_back({planted[i]->address, planted[i]->insn->bytes_under_breakpoint(breakpoint.size())});
    }
    static_cast<void>(p.write_pieces(pieces));
    return {};
  }));
  for (Site* site : planted) {
    site->planted = false;
    supervisor_.patches().release(*this, site->address);
    retired_.insert(site->address);
  }
  return {};
}

}  // namespace xprobe::probe::engine
