#pragma once
// Per-architecture facts the probe language needs: register names as the kernel's
// regs_query_register_offset() accepts them, the order behind the seed's `rN` alias, and the
// calling convention behind `$argN`, `$retval`, `$stackN` and the return address. Pure data,
// for every architecture on any host (an x86-64 xprobe parses AArch64 definitions too).
//
// A RegisterId is the register's index in the architecture's ptrace register block
// (x86-64: struct user_regs_struct, i386: the 32-bit user_regs_struct, AArch64:
// struct user_pt_regs); register_word() (register_block.h) finds it in the host's block.
// `rN` means the same Nth word, the order the kernel's pt_regs uses.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "insn/arch.h"

namespace xprobe::arch {

using RegisterId = uint16_t;

struct RegisterName {
  std::string_view name;  // without the '%'
  RegisterId id;
};

struct RegisterAbi {
  insn::Arch arch;
  unsigned word_size;                             // bytes: 8 or 4
  std::span<const std::string_view> block_order;  // block_order[id] = canonical name
  std::span<const RegisterName> names;            // every accepted spelling
  std::span<const RegisterId> argument_registers;  // $arg1.. in registers, then the stack
  // Stack slot (in words from the stack pointer at function entry) of the first argument
  // that does not fit in registers: 1 on x86 (slot 0 holds the return address), 0 on AArch64.
  unsigned first_stack_argument_slot;
  RegisterId stack_pointer;
  RegisterId instruction_pointer;
  RegisterId return_value;
  // AArch64 keeps the return address in x30 at entry; x86 keeps it at [sp].
  std::optional<RegisterId> link_register;
};

const RegisterAbi& register_abi(insn::Arch arch);

std::optional<RegisterId> find_register(const RegisterAbi& abi, std::string_view name);
std::string_view register_name(const RegisterAbi& abi, RegisterId id);

}  // namespace xprobe::arch
