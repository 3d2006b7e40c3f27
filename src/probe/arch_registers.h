#pragma once
// The probe language names registers through the architecture's tables (arch/register_abi.h):
// `%NAME`, `rN`, `$argN`, `$retval`, `$stackN` and the return address all come from there.
#include "arch/register_abi.h"

namespace xprobe::probe {

using RegisterId = arch::RegisterId;
using RegisterName = arch::RegisterName;
using ArchProbeAbi = arch::RegisterAbi;

inline const ArchProbeAbi& probe_abi(insn::Arch arch) { return arch::register_abi(arch); }
using arch::find_register;
using arch::register_name;

}  // namespace xprobe::probe
