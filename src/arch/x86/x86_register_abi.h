#pragma once
// The x86-64 (System V) and i386 (cdecl) register tables of arch/register_abi.h.
#include "arch/register_abi.h"

namespace xprobe::arch::x86 {

const RegisterAbi& x86_64_register_abi();
const RegisterAbi& i386_register_abi();

}  // namespace xprobe::arch::x86
