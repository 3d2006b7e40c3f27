#pragma once
// How the tracer makes a stopped thread run one system call (a remote system call): the code
// it runs (the system-call instruction, then a breakpoint that stops the thread right after),
// the registers that carry the number and the arguments, the register that holds the result.
// It depends on the code the thread runs: an i386 thread under an x86-64 kernel enters through
// int 0x80 with the i386 numbers and registers.
#include <cstdint>
#include <span>

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
};

}  // namespace xprobe::arch
