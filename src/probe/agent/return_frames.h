#pragma once
// How a thread's frame stack follows the calls and returns of return-probed functions: the
// same code for the agent (in the traced thread, freestanding) and for the tracer (at return
// sites it watches with a breakpoint). It only follows the stack pointer, as the trap engine
// does (trap_engine.h): the program's stack is never touched, so a wrong guess can only lose
// an event, never break the program.
#include "probe/agent/agent_abi.h"

namespace xprobe::agent {

// A plain field-by-field copy: the freestanding agent has no memcpy to call.
inline void copy_frame(AgentFrame& to, const AgentFrame& from) {
  to.descriptor = from.descriptor;
  to.return_address = from.return_address;
  to.entry_sp = from.entry_sp;
  to.probe_index = from.probe_index;
  to.flags = from.flags;
  for (uint32_t i = 0; i < kMaxSavedWords; ++i) to.saved[i] = from.saved[i];
}

// Whose frame stack a hit belongs to (an AgentThread's key) and the stack position its frames
// are compared by. In a Go program (`goroutines`) the goroutine running, when its g (the
// register Go's ABI keeps it in) is a g whose stack holds the stack pointer: its first two
// words are the stack's bounds (runtime/runtime2.go: g.stack.lo, g.stack.hi). Anything else
// (C code of a cgo program, a g that does not check out) is the thread's. `read_words(address,
// words, 2)` reads the program's memory, false on a fault.
struct FrameOwner {
  uint64_t key;
  uint64_t sp;
};
inline constexpr uint64_t kLargestGoroutineStack = uint64_t{1} << 36;

template <typename ReadWords>
inline FrameOwner frame_owner(bool goroutines, uint64_t tid, uint64_t sp, uint64_t g, ReadWords read_words) {
  if (goroutines && g != 0 && (g & 7) == 0 && (g & kGoroutineKey) == 0) {
    uint64_t bounds[2] = {0, 0};
    if (read_words(g, bounds, 2) && bounds[0] < sp && sp <= bounds[1] && bounds[1] - bounds[0] <= kLargestGoroutineStack)
      return FrameOwner{kGoroutineKey | g, kGoroutineStackTop - (bounds[1] - sp)};
  }
  return FrameOwner{tid, sp};
}

// An entry at `sp`: frames entered at or below it are over (an outer frame lies above).
template <typename Discard>
inline void discard_frames_at_or_below(AgentThread& thread, uint64_t sp, Discard discard) {
  while (thread.depth > 0 && thread.frames[thread.depth - 1].entry_sp <= sp) {
    discard(thread.frames[thread.depth - 1]);
    --thread.depth;
  }
}

// The rule every return probe matches a return by, written once for both engines: the trap
// engine's shadow stacks (trap_engine.cpp), the agent's frame stacks and the jump engine's
// reading of them. A return to `address` with the stack pointer at `sp`: every frame entered
// at least `shortest_pop` below `sp` is over; the outermost of them returns now if it was to
// return here with `sp` at most `longest_pop` above its entry, the others were unwound past
// (longjmp, an exception) and go to `discard`. `Frames` is the innermost-last stack: empty(),
// top() (with entry_sp), pop_into(Frame&); `Frame` has return_address and entry_sp.
enum class ReturnMatch { NoFrameOver, Returned, Unwound };

template <typename Frames, typename Frame, typename Discard>
inline ReturnMatch match_return(Frames& frames, uint64_t sp, uint64_t address, uint64_t shortest_pop,
                                uint64_t longest_pop, Frame& returning, Discard discard) {
  bool popped = false;
  while (!frames.empty() && frames.top().entry_sp + shortest_pop <= sp) {
    if (popped) discard(returning);
    frames.pop_into(returning);
    popped = true;
  }
  if (!popped) return ReturnMatch::NoFrameOver;
  if (returning.return_address == address && sp - returning.entry_sp <= longest_pop) return ReturnMatch::Returned;
  return ReturnMatch::Unwound;
}

// An agent thread's frames as match_return() sees them.
struct AgentFrameStack {
  AgentThread& thread;
  bool empty() const { return thread.depth == 0; }
  const AgentFrame& top() const { return thread.frames[thread.depth - 1]; }
  void pop_into(AgentFrame& frame) {
    copy_frame(frame, thread.frames[thread.depth - 1]);
    --thread.depth;
  }
};

// match_return() on an agent thread, with the architecture's return pops: true when
// `returning` holds the frame that returns (an unwound last frame is discarded too).
template <typename Discard>
inline bool pop_returning_frame(AgentThread& thread, uint64_t sp, uint64_t address, AgentFrame& returning,
                                Discard discard) {
  AgentFrameStack frames{thread};
  const ReturnMatch match = match_return(frames, sp, address, kShortestRetPop, kLongestRetPop, returning, discard);
  if (match == ReturnMatch::Unwound) discard(returning);
  return match == ReturnMatch::Returned;
}

// The site entry for `address` (with its kSiteFlags), or 0 if it is not a known site.
inline uint64_t find_site(const uint64_t* sites, uint64_t address) {
  uint32_t at = site_slot_hash(address);
  for (uint32_t n = 0; n < kSiteSlots; ++n, at = (at + 1) & (kSiteSlots - 1)) {
    const uint64_t entry = __atomic_load_n(&sites[at], __ATOMIC_ACQUIRE);
    if (entry == 0) return 0;
    if ((entry & ~kSiteFlags) == address) return entry;
  }
  return 0;
}

}  // namespace xprobe::agent
