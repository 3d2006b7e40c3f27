#pragma once
// The AArch64 (AAPCS64) register table of arch/register_abi.h.
#include "arch/register_abi.h"

namespace xprobe::arch::arm64 {

const RegisterAbi& arm64_register_abi();

}  // namespace xprobe::arch::arm64
