#pragma once
// Remote system calls in AArch64 threads (arch/syscall_abi.h): `svc #0; brk #0`, the number
// in x8, the arguments in x0..x5, the result in x0.
#include "arch/syscall_abi.h"

namespace xprobe::arch::arm64 {

const SyscallAbi& arm64_syscall_abi();

}  // namespace xprobe::arch::arm64
