#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace xprobe::insn {

// The instruction sets xprobe decodes. I386 is x86 in 32-bit protected mode.
enum class Arch : uint8_t { X86_64, I386, AArch64 };

std::string_view arch_name(Arch arch);                       // "x86_64", "i386", "aarch64"
std::optional<Arch> parse_arch(std::string_view name);       // accepts the names above (and "x86-64", "arm64")

}  // namespace xprobe::insn
