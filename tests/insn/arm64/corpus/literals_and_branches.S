// Every pc-relative and register-branch class, in the forms assemblers write.
        .arch armv8.8-a+sve+memtag+ls64+pauth+crc+lse+rcpc
        .text
        .globl pc_relative
        .type pc_relative, %function
pc_relative:
.Lstart:
        adr     x0, data_word
        adr     x30, .
        adrp    x1, data_word
        adrp    x2, pc_relative
        ldr     w3, data_word
        ldr     x4, data_word
        ldr     s5, data_word
        ldr     d6, data_word
        ldr     q7, data_quad
        ldrsw   x8, data_word
        prfm    pldl1keep, data_word
        prfm    #0x1f, data_word
        ldr     x9, =0x123456789abcdef0
        ldr     q10, =0x0
        b       1f
        bl      .Lstart
1:      b.eq    1b
        b.ne    2f
        b.al    2f
        b.nv    2f
        bc.lt   2f
        bc.hi   1b
2:      cbz     w1, 2b
        cbnz    x2, 3f
        tbz     w3, #5, 2b
        tbnz    x4, #63, 3f
3:      br      x5
        blr     x6
        ret
        ret     x7
        braa    x8, x9
        brab    x10, sp
        braaz   x11
        brabz   x12
        blraa   x13, x14
        blrab   x15, x16
        blraaz  x17
        blrabz  x18
        retaa
        retab
        .size pc_relative, .-pc_relative
        .balign 16
data_quad:
        .quad 0x0123456789abcdef, 0xfedcba9876543210
data_word:
        .word 0x12345678
        .ltorg
