#pragma once
// The contract between the in-process agent (agent.cpp, built freestanding and copied into
// the traced process) and the tracer that reads what it records. Plain C layout, only
// <stdint.h>: both sides compile it, with different compilers' flags.
//
// Memory the jump engine maps into the traced process:
//   code area (r-x, within rel32 reach of the probed code): the agent's code, then one
//     AgentProbe descriptor and one trampoline per jump-optimized probe;
//   ring area (rw-): an AgentRingHeader, then the ring of records.
//
// A record (all fields little-endian; a record's reserved length is a multiple of 16, so the
// end of the ring always has room for a filler's two words):
//   word 0  header: bits 0..31 length of the whole record in bytes, bits 32..47 probe index
//           (kPadProbe: filler to skip), bit 63 committed
//   word 1  position: the record's absolute ring position (head value when reserved); a
//           header left over from an earlier lap has the wrong position and is not ready
//   word 2  tid          word 3  TSC at the hit (rdtscp)     word 4  cpu (TSC_AUX & 0xfff)
//   words   one per bit of the probe's register_mask, lowest register id first
//   chunks  { u64 address; u32 requested; u32 copied; copied bytes padded to 8 } for every
//           memory read the probe's ops made, in order
// Everything in the ring was written by the traced process: the tracer validates every
// length, index and count before use.
#include <stdint.h>

namespace xprobe::agent {

inline constexpr uint64_t kRingMagic = 0x31474e4952505821ull;  // "!XPRING1"
inline constexpr uint32_t kPadProbe = 0xffff;
inline constexpr uint64_t kCommitted = uint64_t{1} << 63;
inline constexpr uint32_t kMaxProbes = 4096;        // per traced process
inline constexpr uint32_t kRecordFixedWords = 5;    // header, position, tid, tsc, cpu
inline constexpr uint32_t kChunkHeaderBytes = 16;
inline constexpr uint32_t kMaxCopy = 4096;          // one chunk at most (MAX_STRING_SIZE)

// Saved registers: the trampoline stores word i of the block at index i of the x86-64 ptrace
// register block (struct user_regs_struct) for i < kSavedRegisterWords.
inline constexpr uint32_t kSavedRegisterWords = 20;  // r15 .. rsp

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
};

struct AgentOp {
  uint8_t code;
  uint8_t reg;
  uint16_t reserved;
  uint32_t size;
  int64_t operand;
};

struct AgentRingHeader {
  uint64_t magic;
  uint64_t ring_size;    // bytes, a power of two
  uint64_t head;         // producers: bytes reserved since the start
  uint64_t tail;         // the tracer: bytes consumed since the start
  uint64_t pid;          // the process's pid, for process_vm_readv on itself
  uint64_t dropped[kMaxProbes];  // hits not recorded because the ring was full
};

// One per jump-optimized probe, written by the tracer, read by the agent.
struct AgentProbe {
  uint64_t ring;          // address of the AgentRingHeader; the ring follows it
  uint32_t probe_index;   // < kMaxProbes
  uint32_t register_mask; // bit i: record saved register i
  uint32_t max_record;    // bytes to reserve (the most the ops can record)
  uint32_t op_count;
  AgentOp ops[1];         // op_count entries, the last kOpEnd
};

}  // namespace xprobe::agent
