#pragma once
// The breakpoint ("trap") engine: int3 at every probe address, one stop per hit, the
// probed instruction executed out of line in a slot or emulated (see
// arch/x86/probe_support/execution_plan.h for which; everything architecture-specific comes
// from arch/probe_arch.h, chosen per process), return probes with a per-thread
// shadow stack.
//
// Return probes do NOT replace the return address on the stack. On entry the engine reads
// the return address R (at [rsp] on x86), pushes {probe, R, rsp} on the thread's shadow stack and
// makes sure a breakpoint sits at R (the instruction after the call, shared by all frames
// returning there). When a thread stops at R, every shadow entry with an entry rsp below the
// current rsp belongs to a frame that is gone; the one nearest the current rsp with return
// address R is the frame that just returned (a return event), the others were skipped by
// longjmp or by a C++ exception (discarded, counted). The stack is never modified, so
// unwinders (C++ exceptions, backtrace(), pthread_cancel), longjmp, stack-switching code and
// a tracer killed with SIGKILL mid-call never see a foreign address; a mistake in matching
// can only lose or misreport an event, never break the program.
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
#include "insn/x86/decoder.h"
#include "probe/engine/patch_companion.h"
#include "support/result.h"
#include "target/process.h"

namespace xprobe::probe::engine {

using ProbeId = uint32_t;

// What a probe's callback sees. Registers are the thread's at the breakpoint, with rip
// already set back to the probed address.
struct HitContext {
  target::Process& process;
  pid_t tid;
  uint64_t address;                 // the probed address (function entry for return probes)
  const target::Registers& registers;
  target::Memory& memory;
};

struct ReturnContext {
  const HitContext& hit;            // registers at the return site: rax is the return value
  uint64_t function;                // where the entry was (the probe's address)
  uint64_t return_address;          // where it returned to
  const std::vector<uint64_t>& saved;  // what save_at_entry returned at the entry
};

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

inline constexpr uint32_t kDefaultMaxActive = 4096;

struct ProbeStats {
  uint64_t hits = 0;       // entry probes: breakpoint hits; return probes: returns reported
  uint64_t misses = 0;     // return probes: entries not tracked (MAXACTIVE, unplaceable return site)
  uint64_t discarded = 0;  // return probes: frames unwound without returning (longjmp, exception)
};

struct EngineOptions {
  // Trace forked children too (their hits are reported with their own process/tid); else a
  // child gets every breakpoint removed and is detached at once. A followed child is
  // detached when it execs (its new image is not resolved again).
  bool follow_fork = false;
  // Decodes one instruction of an x86-64 process (tests substitute an oracle); the default is
  // the ProbeArch of the code the process runs (arch/probe_arch.h), chosen again at exec.
  std::function<insn::x86::DecodeStatus(std::span<const uint8_t>, uint64_t, insn::x86::X86Insn&)> decode;
};

enum class RunEnd { Exited, Killed, Detached };

struct RunResult {
  RunEnd end = RunEnd::Exited;
  int exit_status = 0;  // Exited
  int signal = 0;       // Killed
};

class TrapEngine {
 public:
  explicit TrapEngine(target::Process& process, EngineOptions options = {});
  ~TrapEngine();
  TrapEngine(const TrapEngine&) = delete;
  TrapEngine& operator=(const TrapEngine&) = delete;

  // Plants a probe; also while running (from a callback, or between run() calls). Probes at
  // one address share one breakpoint. Fails with a message naming the address and the reason
  // (unreadable, undecodable, refused instruction, no slot area within reach).
  Result<ProbeId> add_probe(ProbeSpec spec);
  Status remove_probe(ProbeId id);
  // A breakpoint for the tracer's own use (the dynamic linker's r_brk, unwinder hooks):
  // same mechanics, never counted or reported as a probe.
  Result<ProbeId> add_internal_breakpoint(uint64_t address, std::function<void(const HitContext&)> callback);

  // Called after the program exec'ed: every probe is gone (the image is new); add new ones
  // from here. The process is stopped at the new image's entry.
  void set_exec_handler(std::function<void(TrapEngine&)> handler) { exec_handler_ = std::move(handler); }

  ProbeStats stats(ProbeId id) const;
  // Every probe with its statistics (removed ones too).
  std::map<ProbeId, ProbeStats> all_stats() const;

  // Runs the program until it exits or is killed, or until a stop is requested
  // (target::StopSignals / request_stop()): then everything is undone and the process is
  // detached, running on as if never traced (RunEnd::Detached).
  Result<RunResult> run();
  // Removes every breakpoint, moves threads out of slots, detaches. Safe at any time.
  Status detach();

  target::Process& process() { return process_; }
  // The architecture of the code the probes go into (x86-64 or i386).
  insn::Arch arch() const { return arch_ ? arch_->arch() : insn::Arch::X86_64; }

  // Another engine's code patches in this process (the jump engine): told when to drain
  // and when to undo them; no breakpoint is ever planted inside them.
  void set_companion(PatchCompanion* companion) { companion_ = companion; }
  // Whether a breakpoint of ours sits in [begin, end).
  bool has_site_in(uint64_t begin, uint64_t end) const;

 private:
  struct Site;
  struct Frame;
  struct Probe;
  struct SlotArea {
    uint64_t start = 0;
    uint64_t size = 0;
    uint64_t used = 0;
  };

  Result<Site*> site_for(uint64_t address);
  Status plant(Site& site);
  Status unplant(Site& site);
  void release_site_if_unused(uint64_t address);
  Result<uint64_t> allocate_slot(uint64_t near, pid_t tid);
  Status handle_trap(target::Process& process, const target::StopEvent& event, bool report);
  Status resume_past(target::Process& process, pid_t tid, Site& site, target::Registers& registers);
  void return_site_hit(pid_t tid, uint64_t address, target::Registers& registers, const HitContext& context);
  void discard_frames_below(pid_t tid, uint64_t rsp);
  void drop_frame(const Frame& frame, bool discarded);
  Status on_fork(const target::StopEvent& event);
  Status on_vfork_child_event(pid_t tid);
  Status on_exec();
  Status move_out_of_slots(target::Process& process);
  Status move_thread_out_of_slot(target::Process& process, pid_t tid, bool remember_replay);
  const Site* site_of_slot_ip(uint64_t ip) const;
  Result<std::unique_ptr<arch::ProbedInstruction>> decode_at(uint64_t address);
  void select_arch();
  uint64_t ip(const target::Registers& registers) const { return arch_->instruction_pointer(registers.raw); }
  uint64_t sp(const target::Registers& registers) const { return arch_->stack_pointer(registers.raw); }
  void set_ip(target::Registers& registers, uint64_t value) const { arch_->set_instruction_pointer(registers.raw, value); }

  target::Process& process_;
  EngineOptions options_;
  // What is specific to the architecture of the code the process runs: everything the engine
  // knows of instructions, breakpoints and registers comes from here.
  const arch::ProbeArch* arch_ = nullptr;
  std::unique_ptr<arch::ProbeArch> owned_arch_;  // arch_ when EngineOptions::decode replaced the decoder
  std::string arch_refusal_;                     // why there is no arch_
  std::map<uint64_t, std::unique_ptr<Site>> sites_;
  std::map<ProbeId, std::unique_ptr<Probe>> probes_;
  std::map<pid_t, std::vector<Frame>> shadow_stacks_;
  std::vector<SlotArea> areas_;
  std::map<pid_t, std::pair<uint64_t, uint64_t>> replays_;  // tid -> {address, rsp} of a hit being replayed
  std::map<pid_t, uint64_t> unresumed_traps_;  // tid -> breakpoint address of a hit not resumed yet
  std::set<uint64_t> retired_;  // addresses whose breakpoint was removed: a late trap there is ours
  std::map<pid_t, std::unique_ptr<target::Process>> vfork_children_;
  std::map<pid_t, std::unique_ptr<target::Process>> followed_;  // forked children we trace (by pid)
  Status on_followed_event(pid_t tid);
  Status for_each_address_space(const std::function<Status(target::Process&)>& action);
  Status detach_one(target::Process& process);
  std::function<void(TrapEngine&)> exec_handler_;
  ProbeId next_id_ = 1;
  pid_t current_tid_ = 0;  // the thread whose hit is being handled (stays stopped)
  bool detached_ = false;
  PatchCompanion* companion_ = nullptr;
};

}  // namespace xprobe::probe::engine
