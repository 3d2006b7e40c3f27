#include "arch/probe_arch.h"

#include <fmt/format.h>

#if defined(__x86_64__)
#include "arch/x86/probe_support/x86_probe_arch.h"
#elif defined(__aarch64__)
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

insn::Arch thread_arch(const RegisterBlock& registers) {
  return registers.cs == x86::kUser32CodeSegment ? insn::Arch::I386 : insn::Arch::X86_64;
}

#elif defined(__aarch64__)

Result<const ProbeArch*> probe_arch(insn::Arch arch) {
  static const std::unique_ptr<ProbeArch> aarch64 = arm64::make_probe_arch();
  if (arch == insn::Arch::AArch64) return aarch64.get();
  return make_error(fmt::format("the trap engine of an arm64 xprobe does not handle {} code", insn::arch_name(arch)));
}

insn::Arch thread_arch(const RegisterBlock&) { return insn::Arch::AArch64; }

#endif

}  // namespace xprobe::arch
