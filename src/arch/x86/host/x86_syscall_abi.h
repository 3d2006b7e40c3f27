#pragma once
// Remote system calls in x86 threads (arch/syscall_abi.h): a resumable `syscall` stub with the x86-64
// numbers and registers, `int 0x80; int3` with the i386 ones in 32-bit code.
#include "arch/syscall_abi.h"

namespace xprobe::arch::x86 {

const SyscallAbi& x86_64_syscall_abi();
const SyscallAbi& i386_syscall_abi();

}  // namespace xprobe::arch::x86
