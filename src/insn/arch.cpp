#include "insn/arch.h"

namespace xprobe::insn {

std::string_view arch_name(Arch arch) {
  switch (arch) {
    case Arch::X86_64: return "x86_64";
    case Arch::I386: return "i386";
    case Arch::AArch64: return "aarch64";
  }
  return "unknown";
}

std::optional<Arch> parse_arch(std::string_view name) {
  if (name == "x86_64" || name == "x86-64" || name == "amd64") return Arch::X86_64;
  if (name == "i386" || name == "i686" || name == "x86") return Arch::I386;
  if (name == "aarch64" || name == "arm64") return Arch::AArch64;
  return std::nullopt;
}

}  // namespace xprobe::insn
