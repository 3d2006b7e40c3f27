// The x86-64 tracer's register block (arch/register_block.h).
#include <sys/ptrace.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "arch/register_block.h"
#include "arch/x86/probe_support/sim_registers.h"
#include "arch/x86/probe_support/x86_probe_arch.h"

namespace xprobe::arch {

Status read_register_block(pid_t tid, RegisterBlock& block) {
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &block) != 0)
    return make_error(fmt::format("cannot read the registers of thread {}: {}", tid, std::strerror(errno)));
  return {};
}

Status write_register_block(pid_t tid, const RegisterBlock& block) {
  if (::ptrace(PTRACE_SETREGS, tid, nullptr, &block) != 0)
    return make_error(fmt::format("cannot write the registers of thread {}: {}", tid, std::strerror(errno)));
  return {};
}

insn::Arch thread_arch(const RegisterBlock& block) {
  return block.cs == x86::kUser32CodeSegment ? insn::Arch::I386 : insn::Arch::X86_64;
}

uint64_t register_word(const RegisterBlock& block, insn::Arch code, unsigned id) {
  constexpr size_t kWords = sizeof block / sizeof(unsigned long long);
  unsigned long long words[kWords];
  std::memcpy(words, &block, sizeof words);
  if (code == insn::Arch::I386) {
    const int word = x86::i386_register_word(id);
    // 32-bit registers: what a 32-bit kernel would show (orig_eax -1 is 0xffffffff there).
    return word < 0 ? 0 : words[word] & 0xffffffffu;
  }
  if (code != insn::Arch::X86_64 || id >= kWords) return 0;
  return words[id];
}

}  // namespace xprobe::arch
