#pragma once
// IFUNC symbols as users mean them. `p libc.so.6:memcpy` names glibc's memcpy, an IFUNC: the
// symbol's address is a resolver that the dynamic linker runs a few times while it relocates,
// and every call then goes to the implementation it returned (__memmove_avx_unaligned_erms,
// which Debian's libc, without .symtab, does not even name). So a probe on the symbol is
// moved to that implementation, read in the traced process from a GOT slot the dynamic
// linker filled with it: an IRELATIVE slot of the object whose resolver it is (glibc calls
// its own IFUNCs through them), else a GLOB_DAT/JUMP_SLOT slot naming the symbol in any
// object, once it points into the defining object. `BINARY:0xOFFSET` keeps the kernel's
// literal meaning: the resolver is probed there.
#include <cstdint>
#include <optional>
#include <string>

#include "elf/code_range.h"
#include "probe/fetch_interfaces.h"
#include "probe/resolve/module_map.h"

namespace xprobe::probe {

struct IfuncImplementation {
  uint64_t address = 0;       // runtime address of the chosen implementation
  uint64_t link_address = 0;  // the same in the defining object
  elf::CodeRange range;       // what delimits its code (its symbol, or its .eh_frame FDE)
  uint64_t slot = 0;          // the GOT slot it was read from (runtime address)
};

// The implementation chosen for `ifunc` (a symbol of `module` with ifunc set), or nullopt
// while no slot holds one yet (the object is not relocated yet: ask again later).
std::optional<IfuncImplementation> chosen_implementation(const LoadedModule& module, const elf::Symbol& ifunc,
                                                         const ModuleMap& modules, MemoryReader& memory);

// "memcpy -> 0x7f12345678 (__memmove_avx_unaligned_erms)" or "memcpy -> 0x7f12345678".
std::string describe_ifunc_choice(const elf::Symbol& ifunc, const IfuncImplementation& implementation);

}  // namespace xprobe::probe
