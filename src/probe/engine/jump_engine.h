#pragma once
// The jump-optimized engine (the kernel's optprobes, in user space). Where the architecture's
// planner proves it safe (arch/jump_arch.h), a probe's first instruction becomes a jump to
// a trampoline that calls the in-process agent (probe/agent): the agent records the event
// into a ring in the traced process's memory and the thread runs on — no trap, no stop, no
// context switch. The tracer drains the ring (drain(), called between ptrace events, on a
// timer while it waits, at every thread exit and before a detach) and replays the fetch
// programs on what was recorded (probe/agent_capture.h).
//
// The supervisor runs the process (threads, signals, fork, exec, detach); the engine joins it
// as a participant and is told when its patches must be drained or undone. It shares the
// process with the trap engine without knowing it: both claim the bytes they patch in the
// supervisor's ledger.
// Return probes: the probe's entry becomes a jump as above, and so does every return site its
// calls return to (the instruction after the call, in the caller), planted the first time a
// call from there is seen: the agent asks for it with a trap, once per call site. Where a
// return site cannot be patched, its host (the session) may have a breakpoint watch it (one
// stop per return instead of two per call). The program's stack is never modified (see
// probe/agent/return_frames.h).
//
// What stays in the program after a detach: the code area (agent and trampolines, r-x) and
// the ring (rw-), because a thread may still be inside a trampoline; they are never entered
// again once the jumps are gone. After SIGKILL of xprobe the jumps stay: the agent keeps
// recording into a ring nobody reads (and drops once it is full); the program is unharmed.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/jump_arch.h"
#include "probe/agent/return_frames.h"
#include "probe/agent_aggregation.h"
#include "probe/agent_capture.h"
#include "probe/agent_ring_reader.h"
#include "probe/engine/code_areas.h"
#include "probe/engine/hit_context.h"
#include "supervisor/participant.h"
#include "supervisor/supervisor.h"
#include "support/result.h"
#include "target/process.h"

namespace xprobe::probe::engine {

struct JumpProbeSpec {
  uint64_t address = 0;
  arch::JumpPatchFunction function;  // the probed function, bytes as in its file
  AgentCapture capture;
  // The patch, when the caller planned it already (plan()); else add_probe() plans it.
  std::optional<arch::JumpPlan> patch;
  // One call per recorded hit, from drain(). `record` is validated; `timestamp_ns` is
  // CLOCK_MONOTONIC like the trap engine's events.
  std::function<void(const AgentRecord& record, uint64_t timestamp_ns)> on_record;
  // Hits the agent could not record (ring full) or whose record was unreadable.
  std::function<void(uint64_t count)> on_lost;
  // The probe's event filter compiled for the agent (probe/filter/agent_filter.h), empty for
  // none: hits it proves false write no record, and are reported here (by finish()).
  std::vector<uint8_t> agent_filter;
  std::function<void(uint64_t count)> on_filtered;
  // Aggregations the agent computes (probe/agent_aggregation.h): each gets a table in the
  // process, and a hit the agent folds into them writes no record. What the tables gained is
  // reported through on_aggregated (collect_aggregations()); a table found corrupt is reported
  // through on_aggregation_failed once, and the agent's aggregation of the probe is switched
  // off: its hits are records again, for the tracer to aggregate.
  std::vector<AgentAggregationSpec> agent_aggregations;
  std::function<void(size_t aggregation, const AggregationUpdate& update)> on_aggregated;
  std::function<void(const std::string& why)> on_aggregation_failed;
  // Hits the agent folded into the tables (they made no record), reported with the filtered.
  std::function<void(uint64_t count)> on_aggregated_hits;

  // Planted switched off (set_enabled() turns it on): the jump is in, its hits record nothing.
  bool disabled = false;

  // Return probes: the record is made at the return (AgentRecord::return_address, saved).
  bool is_return = false;
  uint32_t max_active = 0;  // outstanding frames, all threads; 0: kDefaultMaxActive
  // A return seen by a breakpoint (a return site that could not be patched).
  std::function<void(const HitContext& at_return, uint64_t return_address, std::span<const uint64_t> saved)>
      on_trapped_return;
  // Entries not tracked (MAXACTIVE, recursion deeper than agent::kMaxFrames, a return site
  // neither patched nor watched), reported by finish().
  std::function<void(uint64_t count)> on_missed;
  // Frames given up without a return seen (unwound, or left on another stack: return_frames.h),
  // reported by finish().
  std::function<void(uint64_t count)> on_unwound;
};

// What the engine needs from its user to patch return sites.
class ReturnSiteHost {
 public:
  virtual ~ReturnSiteHost() = default;
  // The function holding `address` (a return site), as for an entry probe, with its landing
  // pads; or why it cannot be patched.
  virtual Result<arch::JumpPatchFunction> describe_return_site(uint64_t address) = 0;
  // The site could not be patched, and why: watch_return_site() is asked next.
  virtual void return_site_not_patched(uint64_t address, const std::string& why) = 0;
  // Plants a breakpoint at `address` whose hits call JumpEngine::return_trapped(). An error
  // (--engine jump: no breakpoints): returns there are missed, and counted.
  virtual Status watch_return_site(uint64_t address) = 0;
};

class JumpEngine final : public supervisor::Participant {
 public:
  // `arch`: the process's code (arch::jump_arch()).
  JumpEngine(supervisor::Supervisor& supervisor, const arch::JumpArch& arch);
  ~JumpEngine() override;
  JumpEngine(const JumpEngine&) = delete;
  JumpEngine& operator=(const JumpEngine&) = delete;

  // Why this process cannot use the engine at all (seccomp, a shadow stack), or success.
  static Status usable(pid_t pid);

  // Plants the probe as a jump. Threads that run are stopped while the jump is written, then
  // resumed (all but the one whose stop is being handled). An error says why it cannot be a
  // jump; nothing was changed then and the caller plants a breakpoint. Returns the probe's
  // index (the agent's probe_index), which names it to set_enabled() and remove_probe().
  Result<uint32_t> add_probe(JumpProbeSpec spec);
  // Switches the probe's hits on or off in the agent (one byte, no thread stopped): off, a
  // hit costs the jump into the trampoline and a flag test. Records already made still come.
  void set_enabled(uint32_t index, bool enabled);
  // Takes the probe out while the process runs on: switched off at once, then, when no other
  // probe shares its jump, the original bytes go back with every thread stopped. Its
  // trampoline and descriptor stay where they are, never reused: a thread may still be inside
  // them (stopped in the agent, or in a signal handler called from there), and it finishes
  // there. Records it made before still come; its index is never given to another probe.
  Status remove_probe(uint32_t index);
  // [address, address + length) of the planned patch for `spec`, or the reason it cannot be.
  Result<arch::JumpPlan> plan(const JumpProbeSpec& spec) const;

  size_t probe_count() const { return probes_.size(); }
  // The agent's clock (AgentRecord::tsc, an entry clock saved for latency) and its rate.
  uint64_t clock_now() const;
  double ticks_per_ns() const { return ticks_per_ns_; }
  // The probe's filter or aggregations changed: `change` edits a copy of its spec (agent_filter,
  // agent_aggregations and their callbacks), and the probe is planted again from it under a new
  // index, sharing the jump (new aggregation tables too), while the old one is taken out as
  // remove_probe() does, so no thread ever sees half a change; its switch carries over, and what
  // the old tables still hold is reported through the old callbacks. Returns the index that
  // names the probe from now on. A return probe (whose entries in flight belong to its index)
  // keeps its index and loses the agent's filter and aggregations (two words): its hits are
  // records again, which the tracer filters and aggregates, as it does every record anyway.
  uint32_t replace_agent_work(uint32_t index, const std::function<void(JumpProbeSpec&)>& change);
  // Takes the agent's aggregation tables (AgentAggTablePair: switched, read whole, emptied):
  // what they gained since the last call goes to each probe's on_aggregated. Also done before
  // a thread exits and at finish(). `final`: no agent will finish what it is doing in a table
  // (the image or the process ends), so a table is read even with an agent in it.
  void collect_aggregations(bool final = false);
  // Records read from the agent's ring so far (every probe, every process image).
  uint64_t records_read() const { return records_read_; }
  // Return sites the agent asked for without the request signal (see agent_abi.h): read on the
  // tracer's timer.
  void serve_pending_requests();

  // None: return sites that cannot be patched are missed.
  void set_return_site_host(ReturnSiteHost* host) { site_host_ = host; }
  // Memory the agent may read without a system call (agent::AgentRingHeader::readable): ranges
  // that stay mapped and readable for the rest of the process's life. At most
  // agent::kReadableRanges are used.
  void set_readable_ranges(std::vector<std::pair<uint64_t, uint64_t>> ranges);
  // A Go program: return probes keep their frames per goroutine (agent::kGoroutineKey).
  void set_goroutine_frames(bool on);
  // A thread stopped on the breakpoint that watches the return site `context.address`.
  void return_trapped(const HitContext& context);
  // The thread is gone: its frame stack in the process is freed.
  void thread_exited(pid_t tid);
  void write_tid_cache_word(size_t offset, uint64_t value);

  // Tracing ended (the process exited, was killed, or was detached): a last drain if it is
  // still there, then the records threads reserved and never finished count as lost.
  void finish();

  // Collects what the patches recorded: between events, periodically while waiting, before a
  // thread exits and before a detach.
  void drain();
  // Puts the original bytes back in `process` (every thread stopped): a forked child that is
  // not traced, or the process itself when its probes become breakpoints or tracing ends.
  Status restore_in(target::Process& process);
  // Nothing of the patches is left (an exec, or restore_in() before breakpoints replace them).
  void forget_all();

  // supervisor::Participant
  bool on_own_signal(target::Process& space, pid_t tid, int signal) override;
  void on_thread_exiting(pid_t tid) override;
  void clean_forked_child(target::Process& child) override;
  void on_vfork_child(bool running) override;
  void on_exec() override;
  unsigned idle_interval_ms() const override { return drain_interval_ms_; }
  void on_idle() override;
  Status remove_patches() override;

 private:
  struct Probe;
  struct Patch;
  struct ReturnSite;
  Status plant(JumpProbeSpec spec, const arch::JumpPlan& patch);
  // Every thread stopped: none inside the bytes `plan` displaces, none overlapping another
  // patch, the live bytes those of `file_bytes` (the function's bytes from its file).
  Status check_patchable(const arch::JumpPlan& plan, const arch::CodeRange& file_code,
                         bool share_entry) const;
  Status plant_return_site(uint64_t address);
  // A code block near `plan` for `descriptor` and a trampoline calling the agent with
  // `other_descriptors` and it, both written; the jump to it is left to the caller.
  struct Placed {
    uint64_t descriptor = 0;
    uint64_t trampoline = 0;
    std::vector<uint64_t> displaced_at;  // the displaced instructions' copies
    std::vector<uint8_t> jump;           // the bytes that lead to the trampoline
  };
  Result<Placed> place_trampoline(const arch::JumpPlan& plan, const std::vector<uint8_t>& descriptor,
                                  const std::vector<uint64_t>& other_descriptors, pid_t tid);
  // The agent's request (a trap, once per call site): patches the return site, or has it watched.
  bool handle_own_signal(pid_t tid, int signal);
  // Patches the return site, or has it watched.
  void serve_request(uint64_t address);
  // Bytes another engine patched lie in the plan's.
  bool clashes(const arch::JumpPlan& plan) const;
  // How long the tracer may wait before the next drain: longer while the ring stays nearly
  // empty (every drain costs the program a little: its CPUs, its memory's locks), shorter
  // when a burst fills it (before the agent has to drop).
  void adapt_drain_interval();
  void add_site_entry(uint64_t entry);
  uint64_t site_table_entry(uint64_t address) const;
  // The agent's name for a thread (its own pid namespace's) and its frame stack slot.
  uint64_t seen_tid(pid_t tid);
  std::optional<uint32_t> thread_slot(uint64_t seen);
  uint64_t thread_address(uint32_t slot) const;
  // The agent's filtered counts since the last look, reported through on_filtered.
  void collect_filtered();
  // The agent's missed and discarded counts since the last look, reported through on_missed
  // and on_unwound.
  void collect_counters();
  std::unique_ptr<agent::AgentThread> read_thread(uint32_t slot);
  void write_depth(uint32_t slot, uint64_t depth);
  // Frames the tracer takes off a thread's stack: counted released for MAXACTIVE, and as
  // missed when their return went unseen (all but a last one that `last_returned`) from a site
  // the agent did not know, else as unwound.
  void release_frames(const std::vector<agent::AgentFrame>& frames, bool last_returned);
  // Every thread stopped: frames entered below a thread's stack pointer are over.
  void release_finished_frames();
  Status map_ring(pid_t tid);
  // The tables of the probe's agent_aggregations, mapped and their headers written.
  Result<std::vector<uint64_t>> map_aggregation_tables(const JumpProbeSpec& spec, pid_t tid);
  void switch_off_aggregations(Probe& probe);
  void write_clock_mult();
  Result<uint64_t> allocate_code(uint64_t near, uint64_t bytes, pid_t tid);
  uint64_t clock_to_ns(uint64_t ticks, uint64_t ticks_now, uint64_t ns_now) const;
  // Our name for a thread the agent named from inside a pid namespace.
  pid_t host_tid(pid_t seen);

  supervisor::Supervisor& supervisor_;
  target::Process& process_;
  const arch::JumpArch& arch_;
  uint64_t ring_ = 0;     // AgentRingHeader in the process; 0 until the first probe
  uint64_t returns_ = 0;  // AgentReturnState, in the same mapping
  std::unique_ptr<AgentRingReader> ring_reader_;
  uint64_t records_read_ = 0;
  CodeAreas areas_;  // each: the agent, then descriptors and trampolines
  std::vector<std::unique_ptr<Probe>> probes_;  // index = the agent's probe_index
  // The agent's clock (JumpArch::read_clock) -> CLOCK_MONOTONIC: a reference pair taken at
  // start and the latest drain's.
  uint64_t clock_origin_ = 0, ns_origin_ = 0;
  double ticks_per_ns_ = 0;
  uint64_t clock_mult_written_ = 0;  // the tables' AgentAggTableHeader::clock_mult
  bool draining_ = false;
  bool in_pid_namespace_ = false;
  // The agent's thread id cache (AgentRingHeader::tid_cache): its epoch, and the vfork
  // children running in this memory.
  uint64_t tid_cache_epoch_ = 0;
  uint64_t vfork_children_ = 0;
  unsigned drain_interval_ms_ = 8;
  std::map<pid_t, pid_t> host_tids_;
  ReturnSiteHost* site_host_ = nullptr;
  std::map<uint64_t, std::unique_ptr<ReturnSite>> sites_;  // by address: patched or watched
  std::vector<uint64_t> site_table_;                       // our copy of AgentReturnState::sites
  std::map<uint64_t, uint32_t> thread_slots_;              // seen tid -> AgentReturnState slot
  std::vector<std::pair<uint64_t, uint64_t>> readable_;
  bool goroutine_frames_ = false;
  void write_readable_ranges();
  void write_goroutine_frames();
  // Whether `sp` lies on one of the agent's stacks (the thread is inside the agent).
  bool on_agent_stack(uint64_t sp) const;
  // The frame stack (agent::frame_owner) of the thread `tid` stopped with `registers`.
  agent::FrameOwner frame_owner(pid_t tid, const target::Registers& registers);
};

}  // namespace xprobe::probe::engine
