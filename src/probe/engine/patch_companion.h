#pragma once
// Code patches in the traced process that the trap engine does not own (the jump engine's),
// and the moments at which the trap engine, which runs the process, must let them act.
#include <sys/types.h>

#include <cstdint>

#include "support/result.h"
#include "target/process.h"

namespace xprobe::probe::engine {

class PatchCompanion {
 public:
  virtual ~PatchCompanion() = default;
  // Collect what the patches recorded: between events, periodically while waiting, before a
  // thread exits and before a detach.
  virtual void drain() = 0;
  // Put the original bytes back in `process` (every thread stopped): a forked child that is
  // not traced, or the process itself when tracing ends.
  virtual Status restore_in(target::Process& process) = 0;
  // The process exec'ed: nothing of the old image is left.
  virtual void forget_all() = 0;
  // Whether `address` lies in patched bytes (a breakpoint there would break the patch).
  virtual bool covers(uint64_t address) const = 0;
  // A thread of the process is about to receive `signal`: true if the companion's own code
  // sent it (to ask the tracer for something), which the companion has then dealt with; the
  // trap engine resumes the thread without the signal.
  virtual bool handle_own_signal(pid_t tid, int signal) = 0;
};

}  // namespace xprobe::probe::engine
