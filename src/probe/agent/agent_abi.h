#pragma once
// The contract between the in-process agent (agent.cpp, built freestanding and copied into
// the traced process) and the tracer that reads what it records. Plain C layout, only
// <stdint.h>: both sides compile it, with different compilers' flags.
//
// Memory the jump engine maps into the traced process:
//   code area (r-x, within the jump's reach of the probed code): the agent's code, then one
//     AgentProbe descriptor and one trampoline per jump-optimized probe;
//   ring area (rw-): an AgentRingHeader, then the ring of records, then (page-aligned) the
//     AgentReturnState of return probes, then (page-aligned) the agent's stacks.
//
// A record (all fields little-endian; a record's reserved length is a multiple of 16, so the
// end of the ring always has room for a filler's two words):
//   word 0  header: bits 0..31 length of the whole record in bytes, bits 32..47 probe index
//           (kPadProbe: filler to skip), bit 63 committed
//   word 1  position: the record's absolute ring position (head value when reserved); a
//           header left over from an earlier lap has the wrong position and is not ready
//   word 2  tid          word 3  the agent's clock at the hit   word 4  cpu (arch/agent_arch.h)
//   return probes only: the return address, then the probe's saved_count words saved at entry
//   words   one per bit of the probe's register_mask, lowest register id first
//   chunks  { u64 address; u32 requested; u32 copied; copied bytes padded to 8 } for every
//           memory read the probe's ops made, in order
// Everything in the ring was written by the traced process: the tracer validates every
// length, index and count before use.
#include <stdint.h>

#include "arch/agent_arch.h"

namespace xprobe::agent {

inline constexpr uint64_t kRingMagic = 0x31474e4952505821ull;  // "!XPRING1"
inline constexpr uint32_t kPadProbe = 0xffff;
inline constexpr uint64_t kCommitted = uint64_t{1} << 63;
inline constexpr uint32_t kMaxProbes = 4096;        // per traced process
inline constexpr uint32_t kRecordFixedWords = 5;    // header, position, tid, tsc, cpu
inline constexpr uint32_t kChunkHeaderBytes = 16;
inline constexpr uint32_t kMaxCopy = 4096;          // one chunk at most (MAX_STRING_SIZE)
inline constexpr uint32_t kAgentStacks = 256;       // threads inside the agent at once
inline constexpr uint64_t kAgentStackBytes = 32 * 1024;
inline constexpr uint32_t kTidCacheSlots = 1024;    // threads whose id the agent remembers
inline constexpr uint32_t kTidCacheProbes = 8;      // slots a thread looks at

// Saved registers: the trampoline stores word i of the block at index i of the ptrace
// register block of the architecture for i < kSavedRegisterWords (arch/agent_arch.h). Both
// sides are built for the same architecture (the agent for the one xprobe runs on).
inline constexpr uint32_t kSavedRegisterWords = arch::kSavedBlockWords;
static_assert(kSavedRegisterWords <= 64, "register_mask has a bit per saved register");
// Words of the block the trampoline leaves without the thread's value.
inline constexpr uint64_t kUnsavedRegisterMask = arch::kUnsavedBlockMask;

enum AgentOpCode : uint8_t {
  kOpEnd = 0,        // end of the probe's program
  kOpRegister,       // value = saved register `reg`
  kOpImmediate,      // value = operand
  kOpAdd,            // value += operand
  kOpDeref,          // value = 8-byte word at value (recorded as a chunk); a fault ends this argument
  kOpCopy,           // record `size` bytes at value
  kOpString,         // record the NUL-terminated string at value (at most kMaxCopy bytes)
  kOpStringArray,    // record `size` pointers at value, then the string at each
  kOpNextArgument,   // the next argument's ops follow (a fault skips to here)
  kOpSave,           // entry of a return probe: the frame's saved word `reg` = value (0 on a fault)
  kOpLoadSaved,      // return: value = the frame's saved word `reg`
  kOpReturnAddress,  // return: value = where the function returned to
  kOpClock,          // value = the agent's clock (a return probe's entry saves it: latency)
};

// What a descriptor describes, and so what the agent does when a trampoline calls it.
enum AgentProbeKind : uint32_t {
  kKindEvent = 0,        // record an event
  kKindReturnEntry = 1,  // a return probe's function entry: push a frame on the thread's stack
  kKindReturnSite = 2,   // code a call returns to: pop the frames that return here, record them
};

struct AgentOp {
  uint8_t code;
  uint8_t reg;
  uint16_t reserved;
  uint32_t size;
  int64_t operand;
};

// Memory the agent may read directly instead of through process_vm_readv: the read-only
// segments of the main executable, which stay mapped and readable for the process's life.
inline constexpr uint32_t kReadableRanges = 8;
struct AgentReadableRange {
  uint64_t begin;
  uint64_t end;  // exclusive
};

struct AgentRingHeader {
  uint64_t magic;
  uint64_t ring_size;    // bytes, a power of two
  uint64_t head;         // producers: bytes reserved since the start
  uint64_t tail;         // the tracer: bytes consumed since the start
  uint64_t pid;          // the process's pid, for process_vm_readv on itself
  uint64_t dropped[kMaxProbes];  // hits not recorded because the ring was full
  uint64_t readable_count;       // <= kReadableRanges
  AgentReadableRange readable[kReadableRanges];
  uint64_t filtered[kMaxProbes];  // hits the probe's filter turned away (no record)
  uint64_t aggregated[kMaxProbes];  // hits folded into the probe's aggregation tables (no record)
  // The agent runs on stacks of its own (kAgentStacks of kAgentStackBytes from `stacks`), not
  // on the thread's: a goroutine's stack or a coroutine's may have no room below its stack
  // pointer for the agent's frames. A hit finding none free is counted in dropped[].
  uint64_t stacks;
  uint64_t stacks_busy[kAgentStacks / 64];  // bit i: stack i is in use
  // Nonzero: the probe is switched off (a live session disabled or removed it). The agent
  // tests it before anything else, so a disabled probe's hit costs the jump into the
  // trampoline and this load; only the tracer writes it (one byte: no torn value).
  uint8_t disabled[kMaxProbes];
  // The thread id a record carries, without a system call per hit: remembered per thread,
  // keyed by the thread pointer (the architecture's TLS base register), which no two live threads share while
  // the cache is on. A slot is claimed once by a compare-and-swap of its thread_pointer and
  // then written only by the thread that has that pointer; its tid_epoch is tid | epoch << 32,
  // valid only while tid_cache_epoch is that epoch. The tracer keeps it true:
  //   tid_cache_on   nonzero only when the agent can read the thread pointer without a system call;
  //   tid_cache_epoch bumped when a thread exits (the C library gives a new thread the exited
  //                  one's thread pointer) and in a followed fork child (same pointer, new tid);
  //   tid_cache_shared nonzero while a vfork child runs in this memory with its parent's
  //                  pointer: the agent neither trusts nor fills the cache then.
  uint64_t tid_cache_on;
  uint64_t tid_cache_epoch;
  uint64_t tid_cache_shared;
  uint64_t tid_cache_reserved;
  struct TidSlot {
    uint64_t thread_pointer;  // 0: free
    uint64_t tid_epoch;
  } tid_cache[kTidCacheSlots];
};

// One per jump-optimized probe (and one per return site), written by the tracer, read by the
// agent.
struct AgentProbe {
  uint64_t ring;          // address of the AgentRingHeader; the ring follows it
  uint64_t returns;       // the AgentReturnState (return entries and sites), else 0
  uint32_t kind;          // AgentProbeKind
  uint32_t probe_index;   // < kMaxProbes
  uint32_t max_record;    // bytes to reserve (the most the ops can record)
  uint64_t register_mask; // bit i: record saved register i
  uint32_t max_active;    // return entries: outstanding frames of this probe, all threads
  uint32_t saved_count;   // return entries: words saved per frame (<= kMaxSavedWords)
  uint32_t entry_ops;     // return entries: ops[0 .. entry_ops) run at entry (kOpSave), the
                          // return's ops follow
  uint32_t filter_offset; // bytes from the descriptor's start to its AgentFilter; 0: none
  uint32_t filter_bytes;  // the AgentFilter's size with its terms, steps and patterns
  uint32_t aggregation_offset;  // bytes from the descriptor's start to its AgentAggregations; 0: none
  uint32_t aggregation_bytes;   // their size with the filters after them
  uint32_t op_count;
  AgentOp ops[1];         // op_count entries, each program ending in kOpEnd
};

// An event filter (probe/filter) compiled for the agent: evaluated on the values a hit
// captured, before the ring is touched. A hit it proves false writes no record (it is counted
// in AgentRingHeader::filtered); anything the agent cannot see (the thread's name, a value
// that faulted or did not fit its scratch) makes a term unknown, and a filter that is not
// proven false is recorded, for the tracer to decide with the whole filter.
enum AgentFilterSource : uint8_t {
  kFilterUnknown = 0,       // the agent cannot tell: the tracer decides
  kFilterTrue,              // decided when the filter was compiled
  kFilterFalse,
  kFilterArgumentValue,     // the argument's computed value (a register, an address)
  kFilterArgumentNumber,    // the little-endian number in the argument's last memory read
  kFilterArgumentString,    // the NUL-terminated text of the argument's last memory read
  kFilterCpu,
  kFilterReturnAddress,     // return probes
  // Only as an aggregation's key or value (AgentAggValue):
  kFilterConstant,          // `operand` (known when the aggregation was compiled: __probe_ip, common_flags)
  kFilterLatency,           // return probes: the agent's clock now minus the frame's saved word `operand`
                            // (its entry's clock), in nanoseconds (AgentAggTableHeader::clock_mult)
};
inline constexpr uint32_t kMaxFilterTerms = 32;
inline constexpr uint32_t kMaxFilterSteps = 2 * kMaxFilterTerms;
inline constexpr uint32_t kMaxFilterArguments = 32;  // arguments the agent keeps values of
inline constexpr uint8_t kFilterSigned = 1;
inline constexpr uint8_t kFilterNegate = 2;  // strings: the match's result is inverted

struct AgentFilterTerm {
  uint8_t source;           // AgentFilterSource
  uint8_t compare;          // agent::CompareOp (probe/agent/filter_match.h)
  uint8_t size;             // bytes compared
  uint8_t flags;            // kFilterSigned, kFilterNegate
  uint8_t match;            // strings: agent::StringMatch
  uint8_t bit_width;        // bitfields: extracted from the container of `size` bytes (0: none)
  uint8_t bit_offset;
  uint8_t argument;         // < kMaxFilterArguments
  uint32_t pattern_offset;  // strings: bytes from the AgentFilter's start
  uint32_t pattern_length;
  uint64_t operand;
};

// The expression in postfix: step = kind << 8 | term.
enum AgentFilterStepKind : uint8_t { kStepTest = 0, kStepAnd, kStepOr, kStepNot };

struct AgentFilter {
  uint32_t term_count;  // <= kMaxFilterTerms
  uint32_t step_count;  // <= kMaxFilterSteps
  // AgentFilterTerm terms[term_count], then uint16_t steps[step_count], then the patterns.
};

// Aggregations computed in the agent (trace/aggregation/agent_aggregation.h compiles them). A
// hit of a probe with AgentAggregations is folded into a table in the program's memory instead
// of being recorded: each aggregation's key (up to kMaxAggKeys parts: numbers, or strings of at
// most kAggStringBytes - 1 bytes) finds its entry in an open-addressing table (a compare-and-swap
// claims a slot for a new key; counts and sums are atomic adds, minimum and maximum
// compare-and-swap loops), and nothing crosses the ring. Whenever the agent cannot compute a key
// or a value (a read that faulted, a string too long, a filter only the tracer can decide), the
// hit is recorded in the ring as before and the tracer aggregates it. A new key that finds the
// table full is counted in AgentAggTableHeader::dropped, as the kernel's hist "Dropped:".
//
// The table lives in the program's memory, so the tracer reads it as untrusted (probe/
// agent_aggregation.h): every index, count and state is checked, and a table that is not what
// the agent writes is corrupt, never believed.
//
// Each aggregation has two tables (AgentAggTablePair): the agent folds into the active one, the
// tracer makes the other active, waits until no agent is still folding into the one it left,
// reads it whole and empties it. So a read never races an update, every hit is in exactly one
// read, and --clear costs nothing extra (each read starts its table again).
inline constexpr uint64_t kAggTableMagic = 0x3142415447415058ull;  // "XPAGTAB1"
inline constexpr uint64_t kAggPairMagic = 0x3152494150475058ull;   // "XPGPAIR1"
inline constexpr uint32_t kMaxAggregations = 4;  // per probe
inline constexpr uint32_t kMaxAggKeys = 4;       // key parts
inline constexpr uint32_t kAggKeyWords = 8;      // key words in an entry
inline constexpr uint32_t kAggStringBytes = 32;  // a string key part: its bytes, NUL included, zero padded
inline constexpr uint32_t kMaxAggValues = 3;
inline constexpr uint32_t kMaxAggEntries = uint32_t{1} << 17;

enum AgentAggTransform : uint8_t {
  kTransformNone = 0,
  kTransformLog2Roundup,   // the kernel's .log2: ilog2(roundup_pow_of_two(v))
  kTransformBuckets,       // the kernel's .buckets=N: v / N * N (parameters[0] = N)
  kTransformHistBucket,    // bpftrace's hist(): 0 for negatives, 1 for 0, 2 + floor(log2 v)
  kTransformLinearBucket,  // bpftrace's lhist(): parameters min, max, step
  kTransformLatencyBucket, // bcc's bpf_log2l(): 0 for 0, 1 + floor(log2 v)
};
enum AgentAggFold : uint8_t { kFoldSum = 0, kFoldMin, kFoldMax };  // values: signed min and max
inline constexpr uint8_t kAggString = 4;  // flags: the key part is the argument's string

struct AgentAggValue {
  uint8_t source;     // AgentFilterSource
  uint8_t size;       // bytes of the number (number_at_size)
  uint8_t flags;      // kFilterSigned, kAggString
  uint8_t bit_width;  // bitfields, as in AgentFilterTerm
  uint8_t bit_offset;
  uint8_t argument;   // < kMaxFilterArguments
  uint8_t transform;  // keys: AgentAggTransform
  uint8_t fold;       // values: AgentAggFold
  int64_t operand;    // kFilterConstant: the value; kFilterLatency: the saved word of the entry's clock
  int64_t parameters[3];
};

struct AgentAggregation {
  uint64_t table;          // its AgentAggTablePair in the program
  uint32_t key_count;      // <= kMaxAggKeys
  uint32_t value_count;    // <= kMaxAggValues
  uint32_t filter_offset;  // bytes from the AgentAggregations' start to the aggregation's own
                           // AgentFilter (a hist trigger's `if`); 0: none
  uint32_t filter_bytes;
  AgentAggValue keys[kMaxAggKeys];
  AgentAggValue values[kMaxAggValues];
};

struct AgentAggregations {
  uint32_t count;  // <= kMaxAggregations
  uint32_t reserved;
  AgentAggregation items[kMaxAggregations];
  // then the aggregations' filters
};

// The table: this header, then uint64_t slots[slot_count] (0: free, else the entry's index + 1
// in the low 32 bits and its key's hash in the high ones), then AgentAggEntry entries[max_entries].
// An entry is reserved by an atomic add on `entries`, filled, then published by the slot's
// compare-and-swap: a slot that is set names a complete key.
struct AgentAggTableHeader {
  uint64_t magic;
  uint64_t slot_count;   // a power of two, twice max_entries (as the kernel's tracing_map)
  uint64_t max_entries;  // <= kMaxAggEntries
  uint64_t entries;      // entries reserved (an entry whose key lost a race stays unused)
  uint64_t dropped;      // hits of a new key that found no room
  uint64_t clock_mult;   // kFilterLatency: nanoseconds = ticks * clock_mult >> 32
  uint64_t reserved[2];
};

struct AgentAggEntry {
  uint64_t ready;     // 1 once a slot names it
  uint64_t hitcount;
  uint64_t key[kAggKeyWords];
  uint64_t values[kMaxAggValues];  // sums wrap; min starts at INT64_MAX, max at INT64_MIN
  uint64_t reserved;
};

inline constexpr uint64_t agg_table_bytes(uint64_t max_entries) {
  return sizeof(AgentAggTableHeader) + 2 * max_entries * 8 + max_entries * sizeof(AgentAggEntry);
}

// An aggregation's two tables. To fold a hit the agent loads `active` (t), adds 1 to
// writers[t], loads `active` again and, if it is still t, folds into table t and subtracts the
// 1; else it subtracts the 1 and starts again. The tracer stores the other index in `active`,
// then waits for writers[t] to read 0: an agent whose second load saw t had added its 1 before
// the tracer's store, so the tracer sees it (both sides' accesses are sequentially
// consistent); any later agent sees the new index. Only the tracer writes `active`.
struct AgentAggTablePair {
  uint64_t magic;        // kAggPairMagic
  uint64_t active;       // 0 or 1: the table hits are folded into
  uint64_t table_bytes;  // from table 0's header to table 1's (a multiple of 64)
  uint64_t reserved[5];
  uint64_t writers[2][8];  // writers[t][0]: agents folding into table t now (a cache line each)
  // then table 0 (AgentAggTableHeader, slots, entries), table 1 at + table_bytes
};
inline constexpr uint64_t agg_pair_table_bytes(uint64_t max_entries) { return (agg_table_bytes(max_entries) + 63) & ~uint64_t{63}; }
inline constexpr uint64_t agg_pair_bytes(uint64_t max_entries) {
  return sizeof(AgentAggTablePair) + 2 * agg_pair_table_bytes(max_entries);
}
inline constexpr uint64_t agg_pair_table_offset(uint64_t max_entries, uint64_t table) {
  return sizeof(AgentAggTablePair) + table * agg_pair_table_bytes(max_entries);
}
inline constexpr uint64_t agg_entries_offset(uint64_t max_entries) { return sizeof(AgentAggTableHeader) + 2 * max_entries * 8; }

inline uint64_t agg_key_hash(const uint64_t* key, uint32_t words) {
  uint64_t hash = 0x243f6a8885a308d3ull;
  for (uint32_t i = 0; i < words; ++i) {
    hash = (hash ^ key[i]) * 0x9e3779b97f4a7c15ull;
    hash ^= hash >> 29;
  }
  return hash | (uint64_t{1} << 63);
}

// Return probes. The stack is never modified: at a return probe's entry the agent pushes
// {probe, return address, sp} on the thread's frame stack, and the code the call returns to
// (a return site) is patched with a jump of its own whose agent call pops the frames that
// are over, as the trap engine does with breakpoints (trap_engine.h). A return address the
// agent does not know yet as a site makes it ask the tracer, which patches it or, where it
// cannot, plants a breakpoint there (kSiteTrapped). It asks by sending its thread
// kRequestSignal with the address in AgentThread::request: the tracer sees the signal before
// the thread runs on and swallows it; without a tracer (xprobe killed) the signal is ignored,
// as its default action is. A program that handles or blocks that signal is asked through
// AgentReturnState::pending instead, which the tracer reads on its timer (that call's return
// is then missed).
inline constexpr uint32_t kMaxSavedWords = 8;
inline constexpr uint32_t kMaxFrames = 64;      // per thread: deeper recursion is missed
inline constexpr uint32_t kThreadSlots = 1024;  // threads with frames at once
inline constexpr uint32_t kSiteSlots = 8192;    // return sites, open addressing
inline constexpr uint64_t kSiteTrapped = uint64_t{1} << 63;    // watched by a breakpoint
inline constexpr uint64_t kSiteUnwatched = uint64_t{1} << 62;  // neither: returns there are missed
inline constexpr uint64_t kSiteFlags = kSiteTrapped | kSiteUnwatched;
inline constexpr uint64_t kFreedThread = ~uint64_t{0};
// How far above a frame's entry sp the sp is right after its function returned
// (arch/agent_arch.h). Below the shortest, the frame is still live.
inline constexpr uint64_t kShortestRetPop = arch::kShortestReturnPop;
inline constexpr uint64_t kLongestRetPop = arch::kLongestReturnPop;
inline constexpr int kRequestSignal = 23;              // SIGURG: ignored by default
inline constexpr uint32_t kPendingSlots = 64;
// Go programs: goroutines move between threads, and the runtime copies a goroutine's stack to
// a larger one as it grows, so their frames are kept per goroutine (a slot's key is the g
// pointer | kGoroutineKey instead of a tid) at their distance from the top of the goroutine's
// stack (a frame's entry_sp is kGoroutineStackTop minus that distance), which a copy keeps.
inline constexpr uint64_t kGoroutineKey = uint64_t{1} << 63;
inline constexpr uint64_t kGoroutineStackTop = uint64_t{1} << 62;

struct AgentFrame {
  uint64_t descriptor;     // the return probe's AgentProbe
  uint64_t return_address;
  uint64_t entry_sp;       // sp at the entry: the return address's slot
  uint32_t probe_index;
  uint32_t flags;          // kFrameSiteUnknown
  uint64_t saved[kMaxSavedWords];
};
// The frame's return site was not known when it was pushed: if the frame is later found over
// without having been seen returning, its return went unseen (a miss, not a discard).
inline constexpr uint32_t kFrameSiteUnknown = 1;

struct AgentThread {
  uint64_t tid;      // the owner: a tid or a goroutine's key; 0: never used; kFreedThread: free again
  uint64_t depth;    // frames in use (only its thread, or the tracer while it is stopped, writes)
  uint64_t request;  // a return site for the tracer, while kRequestSignal is on its way
  uint64_t reserved;
  AgentFrame frames[kMaxFrames];
};

struct AgentProbeCounters {
  uint64_t active;     // frames pushed and not popped by the agent
  uint64_t released;   // frames popped by the tracer (only the tracer writes this)
  uint64_t missed;     // entries not tracked (MAXACTIVE, too deep, no thread slot), returns unseen
  uint64_t discarded;  // frames unwound past without returning (longjmp, exceptions)
};

struct AgentReturnState {
  uint64_t goroutine_frames;   // nonzero: a Go program, frames per goroutine (the tracer sets it)
  uint64_t reserved;
  uint64_t sites[kSiteSlots];  // return site address (| kSiteFlags); 0 = empty
  uint64_t pending[kPendingSlots];  // return sites asked for without the signal; 0 = empty
  AgentProbeCounters counters[kMaxProbes];
  AgentThread threads[kThreadSlots];
};

inline uint32_t site_slot_hash(uint64_t address) {
  return static_cast<uint32_t>((address * 0x9e3779b97f4a7c15ull) >> 51) & (kSiteSlots - 1);
}
inline uint32_t thread_slot_hash(uint64_t tid) {
  return static_cast<uint32_t>((tid * 0x9e3779b97f4a7c15ull) >> 54) & (kThreadSlots - 1);
}

}  // namespace xprobe::agent
