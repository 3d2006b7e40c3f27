#pragma once
// How the tracer makes a stopped thread run one system call (a remote system call): the code
// it runs (the system-call instruction, then a breakpoint that stops the thread right after),
// the registers that carry the number and the arguments, the register that holds the result.
// It depends on the code the thread runs: an i386 thread under an x86-64 kernel enters through
// int 0x80 with the i386 numbers and registers.
//
// A resumable stub (resumable() true) has no breakpoint: the tracer stops the thread at the
// call's exit (PTRACE_SYSCALL) and puts its registers back itself, and should the tracer die
// mid-call (SIGKILL), the thread runs on past the system call into code that reloads its
// registers from a block the tracer wrote beside the stub before the call and jumps back to
// where it was: the program never meets a breakpoint nobody serves, nor registers it did
// not set.
#include <cstdint>
#include <span>
#include <vector>

#include "arch/register_block.h"
#include "support/result.h"

namespace xprobe::arch {

class SyscallAbi {
 public:
  virtual ~SyscallAbi() = default;
  // `system call; breakpoint`, to be written into executable memory of the process.
  virtual std::span<const uint8_t> stub() const = 0;
  // The thread's instruction pointer at the stub's breakpoint stop, from the stub's start.
  virtual uint64_t stub_stop_offset() const = 0;
  // Sets `block` up for the host's system call `host_number` (SYS_* of <sys/syscall.h>) with
  // up to six `args`; an error when this code has no counterpart of that call here.
  virtual Status load(RegisterBlock& block, int64_t host_number, std::span<const uint64_t> args) const = 0;
  // The call's raw result (a negative errno on failure) in the block after the stub's stop.
  virtual int64_t result(const RegisterBlock& block) const = 0;

  // Whether stub() is resumable (above).
  virtual bool resumable() const { return false; }
  // The system-call instruction alone: before the tracer has executable memory of its own,
  // a resumable call runs one the program's code already holds, and nothing is written.
  virtual std::span<const uint8_t> instruction() const { return {}; }
  // Where the resume block goes, from the stub's start, and its bytes for a thread stopped with
  // `saved`: the state the thread would resume in (a system call the stop interrupted is
  // restarted as the kernel would restart it).
  virtual uint64_t resume_block_offset() const { return 0; }
  virtual std::vector<uint8_t> resume_block(const RegisterBlock& saved) const {
    static_cast<void>(saved);
    return {};
  }
};

}  // namespace xprobe::arch
