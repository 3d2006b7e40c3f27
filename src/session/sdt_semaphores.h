#pragma once
// USDT semaphores (the kernel's uprobe "(REF_CTR_OFFSET)"): a marker guarded by one runs only
// while its unsigned short is non-zero, so it is incremented in the traced process while a
// probe on the marker is planted and decremented when the probe goes (detach), as the kernel
// does for its uprobes. A forked child that is let go gets its copy decremented too.
#include <cstdint>
#include <vector>

#include "support/result.h"
#include "target/memory.h"

namespace xprobe::session {

class SdtSemaphores {
 public:
  // Adds one to the semaphore at `address` (runtime) in `memory`.
  Status raise(target::Memory& memory, uint64_t address);
  // Takes back every raise (a process that is gone fails quietly: nothing is left to fix).
  void lower_all(target::Memory& memory);
  // The image they were in is gone (exec): nothing to take back.
  void forget_all() { raised_.clear(); }
  const std::vector<uint64_t>& raised() const { return raised_; }

 private:
  std::vector<uint64_t> raised_;  // one entry per raise
};

}  // namespace xprobe::session
