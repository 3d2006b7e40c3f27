#include "arch/probe_arch.h"

#include <fmt/format.h>

#include "arch/x86/probe_support/x86_probe_arch.h"

namespace xprobe::arch {

Result<const ProbeArch*> probe_arch(insn::Arch arch) {
  static const std::unique_ptr<ProbeArch> x86_64 = x86::make_probe_arch(insn::Arch::X86_64);
  static const std::unique_ptr<ProbeArch> i386 = x86::make_probe_arch(insn::Arch::I386);
  switch (arch) {
    case insn::Arch::X86_64: return x86_64.get();
    case insn::Arch::I386: return i386.get();
    case insn::Arch::AArch64: break;
  }
  return make_error(fmt::format("the trap engine does not handle {} code yet", insn::arch_name(arch)));
}

insn::Arch thread_arch(const RegisterBlock& registers) {
  return registers.cs == x86::kUser32CodeSegment ? insn::Arch::I386 : insn::Arch::X86_64;
}

}  // namespace xprobe::arch
