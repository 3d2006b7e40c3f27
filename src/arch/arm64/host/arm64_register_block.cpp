// The arm64 tracer's register block (arch/register_block.h): user_pt_regs through
// PTRACE_GETREGSET/NT_PRSTATUS.
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "arch/register_block.h"

namespace xprobe::arch {

Status read_register_block(pid_t tid, RegisterBlock& block) {
  iovec io{&block, sizeof block};
  if (::ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &io) != 0)
    return make_error(fmt::format("cannot read the registers of thread {}: {}", tid, std::strerror(errno)));
  // An AArch32 (compat) thread's NT_PRSTATUS is its 18 32-bit registers.
  if (io.iov_len != sizeof block)
    return make_error(fmt::format(
        "thread {} runs AArch32 code (a 32-bit compat process): xprobe traces AArch64 processes only", tid));
  return {};
}

Status write_register_block(pid_t tid, const RegisterBlock& block) {
  iovec io{const_cast<RegisterBlock*>(&block), sizeof block};
  if (::ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &io) != 0)
    return make_error(fmt::format("cannot write the registers of thread {}: {}", tid, std::strerror(errno)));
  return {};
}

insn::Arch thread_arch(const RegisterBlock&) { return insn::Arch::AArch64; }

uint64_t register_word(const RegisterBlock& block, insn::Arch code, unsigned id) {
  constexpr size_t kWords = sizeof block / sizeof(uint64_t);
  if (code != insn::Arch::AArch64 || id >= kWords) return 0;
  uint64_t words[kWords];
  std::memcpy(words, &block, sizeof words);
  return words[id];
}

}  // namespace xprobe::arch
