#pragma once
// The breakpoint ("trap") engine: a breakpoint at every probe address, one stop per hit, the
// probed instruction executed out of line in a slot or emulated (which one is the
// architecture's choice: everything architecture-specific comes from arch/probe_arch.h,
// chosen per process from the code it runs), return probes with a per-thread shadow stack.
// The process itself is run by the supervisor (supervisor/supervisor.h); the engine joins it
// as a participant and handles the stops at its breakpoints.
//
// Return probes do NOT replace the return address on the stack. On entry the engine reads
// the return address R (where the architecture keeps it at a function's entry), pushes
// {probe, R, stack pointer} on the thread's shadow stack and makes sure a breakpoint sits at R
// (the instruction after the call, shared by all frames returning there). When a thread stops
// at R, every shadow entry with an entry stack pointer below the current one belongs to a
// frame that is gone; the one nearest the current stack pointer with return address R is the
// frame that just returned (a return event), the others were skipped by longjmp or by a C++
// exception (discarded, counted). The stack is never modified, so unwinders (C++ exceptions,
// backtrace(), pthread_cancel), longjmp, stack-switching code and a tracer killed with SIGKILL
// mid-call never see a foreign address; a mistake in matching can only lose or misreport an
// event, never break the program.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "arch/probe_arch.h"
#include "probe/agent/return_frames.h"
#include "probe/engine/code_areas.h"
#include "probe/engine/hit_context.h"
#include "supervisor/participant.h"
#include "supervisor/supervisor.h"
#include "support/result.h"
#include "target/process.h"

namespace xprobe::probe::engine {

using ProbeId = uint32_t;

struct ProbeSpec {
  uint64_t address = 0;
  bool is_return = false;
  // Return probes: at most this many outstanding instances (all threads); further entries
  // are misses. 0: kDefaultMaxActive.
  uint32_t max_active = 0;
  std::function<void(const HitContext&)> on_hit;                        // entry probes
  std::function<std::vector<uint64_t>(const HitContext&)> save_at_entry;  // return probes ($argN at entry)
  std::function<void(const ReturnContext&)> on_return;                  // return probes
};

struct ProbeStats {
  uint64_t hits = 0;       // entry probes: breakpoint hits; return probes: returns reported
  uint64_t misses = 0;     // return probes: entries not tracked (MAXACTIVE, unplaceable return site)
  uint64_t discarded = 0;  // return probes: frames unwound without returning (longjmp, exception)
};

// The ProbeArch for the code the process runs (at start and after every exec). The default is
// arch::probe_arch() (arch/registry.h); tests substitute their own implementation of the interface.
using ProbeArchChooser = std::function<Result<const arch::ProbeArch*>(insn::Arch)>;

class TrapEngine final : public supervisor::Participant {
 public:
  explicit TrapEngine(supervisor::Supervisor& supervisor, ProbeArchChooser choose_arch = {});
  ~TrapEngine() override;
  TrapEngine(const TrapEngine&) = delete;
  TrapEngine& operator=(const TrapEngine&) = delete;

  // Plants a probe; also while running (from a callback, or between runs). Probes at one
  // address share one breakpoint. Fails with a message naming the address and the reason
  // (unreadable, undecodable, refused instruction, no slot area within reach, another
  // engine's patch there).
  Result<ProbeId> add_probe(ProbeSpec spec);
  // Removes a probe; also while running, from any callback (its own included). From then on
  // its callbacks are not called; its breakpoint goes when no other probe uses its address,
  // and a return site when no frame waits there any more. Its statistics stay.
  Status remove_probe(ProbeId id);
  // A Go program: return probes keep their shadow stacks per goroutine (agent::frame_owner),
  // since goroutines move between threads and their stacks are copied as they grow.
  void set_goroutine_frames(bool on) { goroutine_frames_ = on; }
  // A breakpoint for the tracer's own use (the dynamic linker's r_brk, unwinder hooks):
  // same mechanics, never counted or reported as a probe.
  Result<ProbeId> add_internal_breakpoint(uint64_t address, std::function<void(const HitContext&)> callback);

  ProbeStats stats(ProbeId id) const;

  // The architecture of the code the probes go into (x86-64 or i386).
  insn::Arch arch() const { return arch_ ? arch_->arch() : supervisor_.arch(); }

  // supervisor::Participant
  Result<supervisor::TrapDisposition> on_trap(const supervisor::TrapStop& stop) override;
  Status before_signal(target::Process& space, pid_t tid) override;
  void on_thread_exited(pid_t tid) override;
  void clean_forked_child(target::Process& child) override;
  void on_exec() override;
  bool undo_trap(target::Process& space, const target::StopEvent& event) override;
  Status remove_patches() override;
  Status release_threads(target::Process& space) override;

 private:
  struct Site;
  struct Frame;
  struct Probe;

  Result<Site*> site_for(uint64_t address);
  Status plant(Site& site);
  Status unplant(Site& site);
  void release_site_if_unused(uint64_t address);
  Result<uint64_t> allocate_slot(uint64_t near, pid_t tid);
  Status resume_past(target::Process& process, pid_t tid, Site& site, target::Registers& registers);
  void return_site_hit(pid_t tid, uint64_t address, target::Registers& registers, const HitContext& context);
  void discard_frames_below(const agent::FrameOwner& owner, uint64_t stack_pointer);
  // Whose shadow stack a stop of `tid` with `registers` belongs to (agent::frame_owner).
  agent::FrameOwner frame_owner(target::Process& process, pid_t tid, const target::Registers& registers);
  void drop_frame(const Frame& frame, bool discarded);
  Status move_thread_out_of_slot(target::Process& process, pid_t tid, bool remember_replay);
  const Site* site_of_slot_ip(uint64_t ip) const;
  Result<std::unique_ptr<arch::ProbedInstruction>> decode_at(uint64_t address);
  void select_arch();
  uint64_t ip(const target::Registers& registers) const { return arch_->instruction_pointer(registers.raw); }
  uint64_t sp(const target::Registers& registers) const { return arch_->stack_pointer(registers.raw); }
  void set_ip(target::Registers& registers, uint64_t value) const { arch_->set_instruction_pointer(registers.raw, value); }

  supervisor::Supervisor& supervisor_;
  target::Process& process_;
  ProbeArchChooser choose_arch_;
  // What is specific to the architecture of the code the process runs: everything the engine
  // knows of instructions, breakpoints and registers comes from here.
  const arch::ProbeArch* arch_ = nullptr;
  std::string arch_refusal_;  // why there is no arch_
  std::map<uint64_t, std::unique_ptr<Site>> sites_;
  std::map<ProbeId, std::unique_ptr<Probe>> probes_;
  // By agent::FrameOwner key: a thread's tid, or in a Go program a goroutine's key.
  std::map<uint64_t, std::vector<Frame>> shadow_stacks_;
  bool goroutine_frames_ = false;
  CodeAreas areas_;  // the slots
  // {address, stack position} of each hit being replayed, innermost last, by agent::FrameOwner
  // key: a thread moved out of a slot for a signal traps at the probed address again when its
  // handler returns. The handler may hit probes (the same one too) and be interrupted in a
  // slot itself; in a Go program the goroutine may go on on another thread (its key follows it).
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> replays_;
  std::map<pid_t, uint64_t> late_stops_resumed_;  // tid -> retired address it was last resumed on, stopped late
  std::set<uint64_t> retired_;  // addresses whose breakpoint was removed: a late trap there is ours
  ProbeId next_id_ = 1;
  pid_t current_tid_ = 0;  // the thread whose hit is being handled (stays stopped)
};

}  // namespace xprobe::probe::engine
