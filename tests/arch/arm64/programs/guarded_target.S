// A freestanding static arm64 program whose code pages are BTI-guarded (its only object
// carries the GNU property note for BTI and PAC, so the kernel maps its text with PROT_BTI)
// and which executes every class the trap engine treats differently: out of line (data
// processing, loads/stores, PACIASP/AUTIASP, BTI, RETAA), simulated (B, BL, B.cond, CBZ/CBNZ,
// TBZ/TBNZ, ADR, ADRP, LDR/LDRSW/PRFM literal, BR, BLR, RET). Functions are reached through
// BLR/BR, so their landing pads matter. It writes one 8-byte checksum of ITERATIONS calls of
// `work` to stdout and exits 0: traced and untraced runs must print the same checksum.
// A 64 KiB executable `slot_area` gives a test harness slots within reach without a remote
// mmap. Built by tests/arm64_vm/CMakeLists.txt (-nostdlib -static).
        .arch armv8.5-a
        .equ ITERATIONS, 12

        .text
        .global _start
        .type _start, %function
_start:
        mov x19, #0                 // i
        mov x20, #0                 // checksum
1:      mov x0, x19
        mov x1, #7
        adr x16, work
        blr x16                     // BTYPE 10: work's PACIASP is its landing pad
        add x20, x20, x0
        ror x20, x20, #7
        add x19, x19, #1
        cmp x19, #ITERATIONS
        b.ne 1b
        str x20, [sp, #-16]!
        mov x0, #1
        mov x1, sp
        mov x2, #8
        mov x8, #64                 // write
        svc #0
        mov x0, #0
        mov x8, #93                 // exit
        svc #0
        .size _start, .-_start

        .global work
        .type work, %function
work:                               // x0 = i, x1 = 7
        paciasp
        stp x29, x30, [sp, #-32]!
        mov x29, sp
        str x0, [sp, #16]
        add x2, x0, x1
        adr x3, table
        adrp x4, table
        add x4, x4, :lo12:table
        ldr x5, literal
        ldr w6, literal
        ldrsw x7, literal_negative
        prfm pldl1keep, literal
        cbz x0, 2f
        add x2, x2, #1
2:      cbnz x0, 3f
        add x2, x2, #2
3:      tbz x0, #0, 4f
        add x2, x2, #4
4:      tbnz x0, #1, 5f
        add x2, x2, #8
5:      cmp x0, #3
        b.lt 6f
        add x2, x2, #16
6:      mov x9, x2
        bl leaf                     // x0 += 100
        add x9, x9, x0
        adr x16, guarded_leaf
        blr x16                     // BTYPE 10 into a PACIASP/RETAA leaf
        add x9, x9, x0
        adr x17, 7f
        br x17                      // BTYPE 01 into BTI j
7:      bti j
        ldr x8, [x3]
        ldr x10, [x4, #8]
        add x9, x9, x8
        add x9, x9, x10
        eor x9, x9, x5
        add x9, x9, x6
        add x9, x9, x7
        ldr x11, [sp, #16]
        mul x9, x9, x11
        mov x0, x9
        ldp x29, x30, [sp], #32
        autiasp
        b 8f
8:      ret
        .size work, .-work

        .type leaf, %function
leaf:
        add x0, x0, #100
        ret
        .size leaf, .-leaf

        .type guarded_leaf, %function
guarded_leaf:
        paciasp
        add x0, x0, #1000
        retaa
        .size guarded_leaf, .-guarded_leaf

        .p2align 3
literal:
        .quad 0x8000000180000002
literal_negative:
        .word 0xfffffff0

        .section .text.slots, "ax"
        .p2align 16
        .global slot_area
        .type slot_area, %object
slot_area:
        .fill 65536, 1, 0
        .size slot_area, .-slot_area

        .section .rodata
        .p2align 3
table:
        .quad 0x1111, 0x2222

        .section .note.gnu.property, "a"
        .p2align 3
        .word 4                     // name size
        .word 16                    // descriptor size
        .word 5                     // NT_GNU_PROPERTY_TYPE_0
        .asciz "GNU"
        .word 0xc0000000            // GNU_PROPERTY_AARCH64_FEATURE_1_AND
        .word 4
        .word 3                     // BTI | PAC
        .word 0
        .section .note.GNU-stack, "", %progbits
