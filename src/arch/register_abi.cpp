#include "arch/register_abi.h"

#include "arch/arm64/arm64_register_abi.h"
#include "arch/x86/x86_register_abi.h"

namespace xprobe::arch {

const RegisterAbi& register_abi(insn::Arch arch) {
  switch (arch) {
    case insn::Arch::X86_64: return x86::x86_64_register_abi();
    case insn::Arch::I386: return x86::i386_register_abi();
    case insn::Arch::AArch64: return arm64::arm64_register_abi();
  }
  return x86::x86_64_register_abi();
}

std::optional<RegisterId> find_register(const RegisterAbi& abi, std::string_view name) {
  for (const RegisterName& entry : abi.names) {
    if (entry.name == name) return entry.id;
  }
  return std::nullopt;
}

std::string_view register_name(const RegisterAbi& abi, RegisterId id) {
  if (id < abi.block_order.size()) return abi.block_order[id];
  return "?";
}

}  // namespace xprobe::arch
