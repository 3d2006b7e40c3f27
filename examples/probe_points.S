/* Functions that show each answer of `xprobe check`: written in assembly so that the
   instructions at each probe point are exactly the ones named here. */
        .text

/* Accepted at +0 (push), +1 (mov), +4 (lea, rip-relative: relocated when executed out of line);
   +2 is inside `mov %rsp,%rbp` (48 89 e5): not on an instruction boundary. */
        .globl  accepted_function
        .type   accepted_function, @function
accepted_function:
        push    %rbp
        mov     %rsp, %rbp
        lea     -0x25(%rip), %rdx
        mov     %rdx, %rax
        pop     %rbp
        ret
        .size   accepted_function, .-accepted_function

/* 0x06 (push %es) does not exist in 64-bit mode: every probe at or after it is refused,
   since the walk from the function start cannot find the boundaries past it. */
        .globl  unknown_instruction_function
        .type   unknown_instruction_function, @function
unknown_instruction_function:
        nop
        .byte   0x06
        lea     -0x25(%rip), %rdx
        ret
        .size   unknown_instruction_function, .-unknown_instruction_function

/* hlt is privileged: it cannot be executed out of line on a user's behalf. */
        .globl  privileged_function
        .type   privileged_function, @function
privileged_function:
        nop
        hlt
        ret
        .size   privileged_function, .-privileged_function

        .section .note.GNU-stack,"",@progbits
