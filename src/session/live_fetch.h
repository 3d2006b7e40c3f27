#pragma once
// The fetch programs' view of a live, stopped thread: its ptrace registers and the process's
// memory; thread names and CPUs for the event records.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "insn/arch.h"
#include "probe/fetch_interfaces.h"
#include "target/memory.h"
#include "target/registers.h"

namespace xprobe::session {

// RegisterIds are those of the probed code's architecture (probe/arch_registers.h): for an
// i386 process, indexes into the 32-bit register block, found in the 64-bit one ptrace fills.
class PtraceRegisterView final : public probe::RegisterView {
 public:
  explicit PtraceRegisterView(const target::Registers& registers, insn::Arch arch = insn::Arch::X86_64)
      : registers_(registers), arch_(arch) {}
  uint64_t read(probe::RegisterId id) const override;

 private:
  const target::Registers& registers_;
  insn::Arch arch_;
};

// The process's memory as fetch programs read it (untrusted: any address may fail).
class ProcessMemoryReader final : public probe::MemoryReader {
 public:
  explicit ProcessMemoryReader(target::Memory& memory) : memory_(memory) {}
  bool read(uint64_t address, std::span<uint8_t> out) override;
  // One process_vm_readv that stops at the first unreadable byte.
  size_t read_up_to(uint64_t address, std::span<uint8_t> out) override;

 private:
  target::Memory& memory_;
};

// Thread names, read from /proc once per thread and again after exec or prctl(PR_SET_NAME)
// could have changed them (forget()).
class CommCache {
 public:
  const std::string& comm(pid_t tid);
  void forget(pid_t tid) { names_.erase(tid); }
  void forget_all() { names_.clear(); }

 private:
  std::map<pid_t, std::string> names_;
};

// The CPU a thread last ran on (field 39 of /proc/TID/stat), through an fd kept open.
class CpuReader {
 public:
  CpuReader() = default;
  ~CpuReader();
  CpuReader(const CpuReader&) = delete;
  CpuReader& operator=(const CpuReader&) = delete;
  uint32_t cpu(pid_t tid);
  // The thread is gone (its fd would stay open for nothing) or the process exec'ed.
  void forget(pid_t tid);
  void forget_all();

 private:
  std::map<pid_t, int> fds_;
};

}  // namespace xprobe::session
