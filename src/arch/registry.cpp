#include "arch/registry.h"

#include <memory>

#include <fmt/format.h>

#if defined(__x86_64__)
#include "arch/x86/host/x86_syscall_abi.h"
#include "arch/x86/probe_support/x86_jump_arch.h"
#include "arch/x86/probe_support/x86_probe_arch.h"
#elif defined(__aarch64__)
#include "arch/arm64/host/arm64_syscall_abi.h"
#include "arch/arm64/probe_support/arm64_jump_arch.h"
#include "arch/arm64/probe_support/arm64_probe_arch.h"
#endif

namespace xprobe::arch {

#if defined(__x86_64__)

Result<const ProbeArch*> probe_arch(insn::Arch arch) {
  static const std::unique_ptr<ProbeArch> x86_64 = x86::make_probe_arch(insn::Arch::X86_64);
  static const std::unique_ptr<ProbeArch> i386 = x86::make_probe_arch(insn::Arch::I386);
  switch (arch) {
    case insn::Arch::X86_64: return x86_64.get();
    case insn::Arch::I386: return i386.get();
    case insn::Arch::AArch64: break;
  }
  return make_error(fmt::format("the trap engine of an x86-64 xprobe does not handle {} code", insn::arch_name(arch)));
}

Result<const JumpArch*> jump_arch(insn::Arch arch) {
  if (arch == insn::Arch::X86_64) return &x86::x86_64_jump_arch();
  return make_error(fmt::format("the jump engine handles x86-64 only, not {} code", insn::arch_name(arch)));
}

insn::Arch host_arch() { return insn::Arch::X86_64; }

Result<const SyscallAbi*> syscall_abi(insn::Arch arch) {
  switch (arch) {
    case insn::Arch::X86_64: return &x86::x86_64_syscall_abi();
    case insn::Arch::I386: return &x86::i386_syscall_abi();
    case insn::Arch::AArch64: break;
  }
  return make_error(fmt::format("an x86-64 xprobe cannot run system calls in {} code", insn::arch_name(arch)));
}

#elif defined(__aarch64__)

Result<const ProbeArch*> probe_arch(insn::Arch arch) {
  static const std::unique_ptr<ProbeArch> aarch64 = arm64::make_probe_arch();
  if (arch == insn::Arch::AArch64) return aarch64.get();
  return make_error(fmt::format("the trap engine of an arm64 xprobe does not handle {} code", insn::arch_name(arch)));
}

Result<const JumpArch*> jump_arch(insn::Arch arch) {
  if (arch == insn::Arch::AArch64) return &arm64::aarch64_jump_arch();
  return make_error(fmt::format("the jump engine of an arm64 xprobe does not handle {} code", insn::arch_name(arch)));
}

insn::Arch host_arch() { return insn::Arch::AArch64; }

Result<const SyscallAbi*> syscall_abi(insn::Arch arch) {
  if (arch == insn::Arch::AArch64) return &arm64::arm64_syscall_abi();
  return make_error(fmt::format("an arm64 xprobe cannot run system calls in {} code", insn::arch_name(arch)));
}

#endif

}  // namespace xprobe::arch
