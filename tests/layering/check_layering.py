#!/usr/bin/env python3
"""The dependency rule of docs/ARCHITECTURE.md, for architecture knowledge: the layers above
arch/ (elf, source, target, supervisor, probe, trace, session, cli) name no architecture's
registers, encodings, intrinsics, preprocessor tests or implementation folders; they reach an architecture only
through the interfaces at the top of src/arch/ (probe_arch.h, jump_arch.h, register_abi.h,
register_block.h, syscall_abi.h, agent_arch.h, source_registers.h, registry.h).

    check_layering.py SRC_DIR     exit 0 when clean, 1 with one line per violation

Comments count too: a comment that needs `rip` to explain itself belongs in arch/.
"""
import pathlib
import re
import sys

LAYERS = ["elf", "source", "target", "supervisor", "probe", "trace", "session", "cli"]

RULES = [
    ("an architecture's implementation folder",
     re.compile(r'#\s*include\s*"(arch/(x86|arm64)/|insn/(x86|arm64)/|sim/)')),
    ("an architecture's namespace", re.compile(r"\b(x86|arm64)::")),
    ("a test of the compiler's target architecture", re.compile(r"\b__(x86_64|i386|aarch64|arm)__\b")),
    ("an x86 register name",
     re.compile(r"\b(rip|rsp|rbp|rax|rbx|rcx|rdx|rsi|rdi|r8d|r9d|eip|esp|ebp|eax|ebx|ecx|edx|esi|edi|"
                r"orig_rax|orig_eax|eflags|rflags|fs_base|gs_base)\b")),
    ("an x86 instruction or intrinsic", re.compile(r"\b(int3|rel32|rdtscp?|__rdtsc|x86intrin|cpuid|syscall;)\b")),
    ("an AArch64 register or ptrace detail",
     re.compile(r"\b(user_pt_regs|NT_PRSTATUS|TRAP_BRKPT|PTRACE_GETREGSET|PTRACE_GETREGS|SI_KERNEL|"
                r"cntvct_el0|CNTVCT_EL0|svc #0|brk #0)\b|\.regs\[")),
    ("ptrace's register block fields", re.compile(r"\buser_regs_struct\b")),
]

SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".c", ".S", ".ld", ".txt"}


def violations(src: pathlib.Path):
    for layer in LAYERS:
        root = src / layer
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.suffix not in SOURCE_SUFFIXES:
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for what, pattern in RULES:
                    found = pattern.search(line)
                    if found:
                        yield f"{path.relative_to(src.parent)}:{number}: {what} ({found.group(0)!r}): {line.strip()}"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = pathlib.Path(sys.argv[1])
    if not all((src / layer).is_dir() for layer in ("probe", "target")):
        print(f"check_layering: {src} is not xprobe's src/ (no probe/ and target/ in it)", file=sys.stderr)
        return 2
    found = list(violations(src))
    for line in found:
        print(line)
    if found:
        print(f"check_layering: {len(found)} place(s) above arch/ know an architecture; move that into src/arch/",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
