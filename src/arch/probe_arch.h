#pragma once
// What a breakpoint probe engine needs to know about the architecture of the code it probes,
// behind one interface: the breakpoint instruction, how to get a thread past a probed
// instruction (run a copy out of line, or emulate it), where a function's return address is
// at entry, and the stack pointer and return value in the thread's register block. The trap
// engine uses nothing else; each process gets the ProbeArch of the code it runs (x86-64 and
// i386 under a 64-bit x86 kernel, AArch64 on arm64) from arch/registry.h.
//
// The register block is the one the tracer's ptrace hands over (arch/register_block.h),
// which depends on the tracer's architecture, not the tracee's.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arch/register_block.h"
#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::arch {

// The traced thread's memory as emulation needs it (the stack for call/ret, operands of
// indirect branches). Implemented by the engine over the process.
class ProbeMemory {
 public:
  virtual ~ProbeMemory() = default;
  virtual Status read(uint64_t address, std::span<uint8_t> bytes) = 0;
  virtual Status write(uint64_t address, std::span<const uint8_t> bytes) = 0;
};

enum class StepPath : uint8_t {
  OutOfLine,  // resume in a slot holding a copy of the instruction and a jump back
  Emulate,    // compute the instruction's effect on registers and memory, resume after it
};

// One decoded instruction at a probe address with the way past it chosen. Opaque to the
// engine beyond these members.
class ProbedInstruction {
 public:
  virtual ~ProbedInstruction() = default;
  uint64_t address() const { return address_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }  // the original instruction
  size_t length() const { return bytes_.size(); }
  StepPath path() const { return path_; }
  // What a breakpoint of `size` bytes covers: written back when the breakpoint goes.
  std::span<const uint8_t> bytes_under_breakpoint(size_t size) const {
    return std::span<const uint8_t>(bytes_).first(std::min(size, bytes_.size()));
  }
  // Pushes a return address (an emulated call writes the stack, which a CET shadow stack forbids).
  bool is_call() const { return is_call_; }

  // OutOfLine: the code for a slot at `slot` (relocated copy, then a jump back).
  virtual Result<std::vector<uint8_t>> slot_code(uint64_t slot) const = 0;
  // Emulate: `registers` become those after the instruction ran at address(). An error
  // leaves them unchanged (a bad memory operand: the original instruction should fault).
  virtual Status emulate(RegisterBlock& registers, ProbeMemory& memory) const = 0;
  // Where a thread at `ip` inside the slot at `slot` is in the original code: the slot's
  // start is the instruction itself, the jump back the instruction after it; 0 otherwise.
  uint64_t original_address_for_slot_ip(uint64_t ip, uint64_t slot) const {
    if (ip == slot) return address_;
    if (ip == slot + length()) return address_ + length();
    return 0;
  }

 protected:
  ProbedInstruction(uint64_t address, std::vector<uint8_t> bytes, StepPath path, bool is_call)
      : address_(address), bytes_(std::move(bytes)), path_(path), is_call_(is_call) {}

 private:
  uint64_t address_;
  std::vector<uint8_t> bytes_;
  StepPath path_;
  bool is_call_;
};

// Where out-of-line slots may be placed relative to the code they serve.
struct SlotLayout {
  uint64_t slot_size = 0;      // every slot has this size
  uint64_t reach = 0;          // largest distance between a slot area and the code
  uint64_t highest_end = 0;    // a slot area must end at or below this address
};

class ProbeArch {
 public:
  virtual ~ProbeArch() = default;
  virtual insn::Arch arch() const = 0;

  // The trap engine's breakpoint. It must fault, not trap: a thread stopped by it has its
  // instruction pointer on it (x86's hlt, AArch64's BRK), so a thread that is let go without
  // being served (xprobe killed) meets it again instead of running from inside the probed
  // instruction.
  virtual std::span<const uint8_t> breakpoint() const = 0;
  // Bytes to read at a probe address so that the longest instruction fits.
  virtual size_t longest_instruction() const = 0;
  // Decodes the instruction at `address` (its bytes start `code`, which may be longer) and
  // decides how to get past it. Refused: an error with the reason a user reads, e.g.
  // "Unknown instruction: 0f 0b ..." or "interrupt instructions trap by themselves".
  virtual Result<std::unique_ptr<ProbedInstruction>> plan(std::span<const uint8_t> code, uint64_t address) const = 0;
  virtual SlotLayout slot_layout() const = 0;

  virtual uint64_t instruction_pointer(const RegisterBlock& registers) const = 0;
  virtual void set_instruction_pointer(RegisterBlock& registers, uint64_t value) const = 0;
  virtual uint64_t stack_pointer(const RegisterBlock& registers) const = 0;
  virtual uint64_t return_value(const RegisterBlock& registers) const = 0;
  // The return address of a function stopped at its first instruction.
  virtual Result<uint64_t> return_address_at_entry(const RegisterBlock& registers, ProbeMemory& memory) const = 0;
  // The frame pointer, and the size of a stack word: code built with frame pointers keeps at
  // the frame pointer {the caller's frame pointer, the return address}, a word each (x86's
  // push rbp after the call's push, AArch64's frame record of x29 and x30).
  virtual uint64_t frame_pointer(const RegisterBlock& registers) const = 0;
  virtual unsigned stack_word_bytes() const = 0;
  // How far above the stack pointer at entry the stack pointer may be right after the
  // function returned (the return address popped, plus what `ret imm16` releases).
  virtual uint64_t longest_return_pop() const = 0;
  // ... and how far it is at least: below that, a frame is still live (x86: the return
  // address; AArch64 returns with sp as it was at the entry).
  virtual uint64_t shortest_return_pop() const = 0;
};

}  // namespace xprobe::arch
