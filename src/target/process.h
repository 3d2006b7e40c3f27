#pragma once
// A traced process over ptrace: launch or attach (launch.cpp), every thread, the stop/resume
// protocol (process.cpp, wait statuses in wait_status.cpp), registers, memory, address-space
// maps and remote system calls (remote_syscall.cpp, free ranges in free_ranges.h).
//
// Protocol: every event next_event() returns leaves its thread stopped; the caller resumes it
// (resume(), with the signal to deliver) or detaches. Stops that are only ptrace bookkeeping
// (interrupt stops we asked for, group-stops, thread-exit notifications) never reach the
// caller. All tracing must happen on the thread that created the Process (a ptrace rule).
#include <sys/types.h>
#include <signal.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "support/result.h"
#include "target/maps.h"
#include "target/memory.h"
#include "target/proc_queries.h"
#include "target/registers.h"
#include "target/wait.h"

namespace xprobe::arch {
class SyscallAbi;
}

namespace xprobe::target {

enum class StopKind {
  Trap,         // the signal of a breakpoint instruction (arch::kBreakpointSignal): `address` is
                // the breakpoint's address, `signal` that signal. It may not be ours (the program's
                // own hlt, or on x86 a fault with the same signal); resume with `signal` then.
  Signal,       // a signal is about to be delivered; resume(tid, signal) delivers it unchanged
  NewThread,    // a thread created by clone() stopped at its start (already in threads())
  Fork,         // the thread forked (fork(), or clone() without CLONE_VM): new_pid is traced too
  Vfork,        // vfork()/posix_spawn: the child shares our memory until it execs or exits
  Exec,         // the process exec'ed: one thread left, every address changed
  ThreadExited, // a thread other than the last one is gone (nothing to resume)
  Exited,       // the whole process exited with `exit_status` (nothing to resume)
  Killed,       // the whole process was killed by `signal` (nothing to resume)
  Foreign,      // a tid this Process does not own stopped (a forked or vfork child, a thread
                // whose clone event is still on its way): its status was kept for its owner
                // (take_stashed_status / adopt_child); nothing to resume here
};

struct StopEvent {
  StopKind kind = StopKind::Signal;
  pid_t tid = 0;
  int signal = 0;
  uint64_t address = 0;   // Trap: the address of the breakpoint instruction
  pid_t new_pid = 0;      // Fork/Vfork: the child
  int exit_status = 0;    // Exited
  siginfo_t info{};       // Trap/Signal
  // Trap: the registers at the stop (read anyway to find the address; saves the caller a
  // register read on the hit path). Valid while the thread stays stopped and untouched.
  bool has_registers = false;
  Registers registers;
};

enum class ThreadState { Running, Stopped, Listening, Starting };

// Told when a thread stops on its way out (PTRACE_EVENT_EXIT), its memory still in place.
class ThreadExitListener {
 public:
  virtual ~ThreadExitListener() = default;
  virtual void thread_exiting(pid_t tid) = 0;
};

// What a wait for the next event brought: an event, or nothing because a stop was requested
// (StopSignals) or the wait went idle (WaitOptions::idle_after_ms).
struct NextEvent {
  std::optional<StopEvent> event;
  bool idle = false;
};

struct LaunchOptions {
  bool kill_on_tracer_exit = true;  // PTRACE_O_EXITKILL: the program dies with xprobe (launched only)
};

class Process final : public Memory {
 public:
  // Starts `argv` (argv[0] searched in PATH) stopped right after its exec.
  static Result<std::unique_ptr<Process>> launch(const std::vector<std::string>& argv, const LaunchOptions& options = {});
  // Attaches to every thread of `pid` and stops them all.
  static Result<std::unique_ptr<Process>> attach(pid_t pid);
  // Takes over a child that ptrace attached automatically (a Fork/Vfork event's new_pid);
  // waits for its first stop.
  static Result<std::unique_ptr<Process>> adopt_child(pid_t pid);

  ~Process() override;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool launched() const { return launched_; }
  bool alive() const { return alive_; }
  const std::map<pid_t, ThreadState>& threads() const { return threads_; }
  bool owns(pid_t tid) const { return threads_.count(tid) != 0; }

  // The next event of this process. std::nullopt: a stop was requested (StopSignals) before
  // any event arrived. Events of other processes' tids that arrive meanwhile are queued for them.
  Result<std::optional<StopEvent>> next_event();
  // The same, and it may return idle after options.idle_after_ms without an event.
  Result<NextEvent> next_event(const WaitOptions& options);

  Status resume(pid_t tid, int signal = 0);
  // Resumes every stopped thread that has no event waiting to be reported (but `except`).
  Status resume_all(pid_t except = 0);
  // Stops every thread (PTRACE_INTERRUPT). Events that arrive instead are kept for next_event().
  Status stop_all();
  // Whether next_event() has an event to start from without waiting: one collected already,
  // or a status a wait for another process's tid kept for one of these threads.
  bool has_waiting_status() const;
  // Events already collected (by stop_all) and not yet returned by next_event().
  const std::deque<StopEvent>& pending_events() const { return pending_; }
  // Removes and returns the pending events (the caller takes over handling them).
  std::deque<StopEvent> take_pending_events();
  // Gives an event back (it is reported again; detach() delivers its signal).
  void push_pending_event(const StopEvent& event) { pending_.push_back(event); }

  // Detaches from every thread; pending signals are delivered on the way out. The caller
  // first removes its breakpoints and fixes up its threads (see the trap engine).
  Status detach();
  Status kill();

  Result<Registers> get_registers(pid_t tid);
  Status set_registers(pid_t tid, const Registers& registers);

  Status read(uint64_t address, std::span<uint8_t> buffer) override;
  Status read_batch(std::span<ReadRequest> requests) override;
  Status write(uint64_t address, std::span<const uint8_t> bytes) override;
  // Writes every piece (pieces must not overlap), as write() one after the other would, but
  // with one write per run of pages that pieces lie on: the bytes between them are read first
  // (all runs in one batched read) and written back as they were. Thousands of patches
  // restored in a forked child cost a few system calls, not thousands. Only for a process
  // whose threads are all stopped (nothing may write the bytes in between meanwhile).
  Status write_pieces(std::span<const WritePiece> pieces);

  Result<std::vector<MapEntry>> maps() const { return read_maps(pid_); }

  // Runs system call `number` in thread `tid` (all threads must be stopped) and returns its
  // raw result (a negative errno on failure). The thread's registers are restored after.
  // `number` is the host's (SYS_* of <sys/syscall.h>); the code the thread runs decides how it
  // is made (arch/syscall_abi.h: in an i386 program with the i386 convention, for the calls
  // that have an i386 counterpart there; an error for others).
  Result<int64_t> remote_syscall(pid_t tid, int64_t number, std::span<const uint64_t> args);
  // Maps `size` bytes (anonymous, private, `prot`) at an address such that the whole area is
  // within `reach` bytes of `near` (for the branches between code and slots) and, unless
  // `highest_end` is 0, ends at or below `highest_end` (32-bit code reaches only 4 GiB).
  Result<uint64_t> remote_mmap_near(pid_t tid, uint64_t near, uint64_t size, int prot, uint64_t reach,
                                    uint64_t highest_end = 0);
  // Maps `size` bytes exactly at `address` (never over something mapped there): `address`, or
  // an error.
  Result<uint64_t> remote_mmap_at(pid_t tid, uint64_t address, uint64_t size, int prot);
  Result<int64_t> remote_munmap(pid_t tid, uint64_t address, uint64_t size);
  // Writes the system-call stub for the code thread `tid` runs at `address` (executable memory
  // of the caller's, never entered by the program) and runs later remote calls from there.
  Status install_syscall_stub(pid_t tid, uint64_t address);
  // An executable address holding the system-call stub, used by remote_syscall instead of
  // patching the code at the thread's instruction pointer (set by whoever owns an executable
  // area in the target).
  void set_syscall_stub(uint64_t address) { syscall_stub_ = address; }
  uint64_t syscall_stub() const { return syscall_stub_; }
  // The stub for the code thread `tid` runs (arch/syscall_abi.h: 64- or 32-bit x86, AArch64).
  Result<std::span<const uint8_t>> syscall_stub_code(pid_t tid);
  void set_exit_listener(ThreadExitListener* listener) { exit_listener_ = listener; }

  // The tid of any stopped thread, or 0.
  pid_t any_stopped_thread() const;
  // Whether every thread is in a ptrace stop.
  bool all_stopped() const;
  // A stopped thread that can run a remote system call (not exiting, not waiting for a vfork
  // child; preferably not inside a system call), or 0.
  pid_t thread_for_remote_call() const;

 private:
  explicit Process(pid_t pid, bool launched);
  Status open_memory();
  // Turns one wait status into an event (or handles it internally and returns nullopt).
  Result<std::optional<StopEvent>> classify(pid_t tid, int status);
  Result<int> wait_remote_call_stop(pid_t tid);
  Status wait_until_stopped(pid_t tid);
  bool breakpoint_signal_pending(pid_t tid) const;
  Status poke_write(uint64_t address, std::span<const uint8_t> bytes);
  // The ptrace event (PTRACE_EVENT_*) of the stop `tid` is in; 0 for a signal-delivery-stop.
  int stop_event(pid_t tid) const;
  bool usable_for_remote_call(pid_t tid) const;
  Status settle_for_remote_call(pid_t tid);
  Result<int64_t> resumable_syscall(pid_t tid, const arch::SyscallAbi& abi, const Registers& saved, int64_t number,
                                    std::span<const uint64_t> args);
  Result<uint64_t> find_syscall_instruction(uint64_t ip, std::span<const uint8_t> instruction);
  uint64_t code_padding(uint64_t size);
  // Signals that arrived while a remote call ran, delivered when the thread runs again.
  void defer_signals(pid_t tid, const std::vector<int>& signals);

  pid_t pid_;
  bool launched_;
  bool alive_ = true;
  int mem_fd_ = -1;
  bool use_vm_readv_ = true;
  uint64_t syscall_stub_ = 0;
  ThreadExitListener* exit_listener_ = nullptr;
  std::map<pid_t, ThreadState> threads_;
  std::deque<StopEvent> pending_;
  bool waiting_for_interrupt_ = false;
  bool leader_exiting_ = false;
  std::set<pid_t> group_stopped_;  // threads in a group-stop of the program (resume with PTRACE_LISTEN)
};

// Stops of tids no Process knows yet (a new thread's first stop that beat its parent's clone
// event, a forked child's first stop) wait here until their Process asks for them.
std::optional<int> take_stashed_status(pid_t tid);
void stash_status(pid_t tid, int status);
bool has_stashed_status(pid_t tid);

}  // namespace xprobe::target
