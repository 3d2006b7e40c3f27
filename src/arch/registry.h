#pragma once
// The one place that maps the architecture of a process's code to the implementations of the
// arch/ interfaces: the trap engine's ProbeArch, the jump engine's JumpArch, the remote
// system-call convention. Which exist depends on the tracer's own architecture too (ptrace
// hands over the host's register block): an x86-64 xprobe traces x86-64 and i386 code, an
// arm64 xprobe AArch64 code. The register tables of the probe language (register_abi.h) are
// there for every architecture on any host.
#include "arch/jump_arch.h"
#include "arch/probe_arch.h"
#include "arch/register_abi.h"
#include "arch/register_block.h"
#include "arch/syscall_abi.h"
#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::arch {

// The trap engine's view of `arch`; an error naming what this xprobe cannot trace.
Result<const ProbeArch*> probe_arch(insn::Arch arch);
// The jump engine's view of `arch`; an error when the jump engine does not handle it.
Result<const JumpArch*> jump_arch(insn::Arch arch);
// Remote system calls in threads running `arch` code.
Result<const SyscallAbi*> syscall_abi(insn::Arch arch);
// The tracer's own architecture: what definitions are parsed for before a process's code is
// known (x86-64 on an x86-64 xprobe, AArch64 on an arm64 one).
insn::Arch host_arch();

}  // namespace xprobe::arch
