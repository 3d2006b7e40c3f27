// Never-probe classes, system register policy, hints and landing pads, SVE/SME, and a mix of
// ordinary instructions that must be classified "none".
        .arch armv8.8-a+sve+sme+memtag+ls64+pauth+crc+lse+rcpc+mops+crypto+sha3+sm4+fp16+bf16+i8mm
        .text
        .globl system_and_hints
        .type system_and_hints, %function
system_and_hints:
        svc     #0
        hvc     #1
        smc     #2
        brk     #0x3e8
        hlt     #0xf000
        eret
        eretaa
        eretab
        drps
        dcps1
        dcps2
        dcps3
        msr     daifset, #2
        msr     daifclr, #2
        msr     spsel, #1
        msr     pan, #1
        msr     uao, #0
        msr     ssbs, #1
        msr     dit, #1
        msr     tco, #1
        smstart
        smstop  sm
        msr     daif, x0
        mrs     x0, daif
        msr     nzcv, x1
        mrs     x1, nzcv
        msr     fpcr, x2
        mrs     x2, fpsr
        msr     tpidr_el0, x3
        mrs     x3, tpidr_el0
        mrs     x4, cntvct_el0
        mrs     x5, midr_el1
        mrs     x5, id_aa64isar0_el1
        mrs     x5, sctlr_el1
        mrs     x5, currentel
        mrs     x5, ccsidr_el1
        mrs     x5, mvfr0_el1
        mrs     x5, s3_0_c0_c7_7
        mrs     x5, s3_4_c1_c0_0
        mrs     x5, ctr_el0
        msr     sctlr_el1, x6
        msr     sp_el0, x6
        msr     elr_el2, x6
        msr     mdscr_el1, x7
        mrs     x7, mdscr_el1
        mrs     x8, dbgbvr0_el1
        msr     oslar_el1, x8
        msr     s3_3_c15_c2_0, x9
        msr     s3_0_c15_c2_0, x9
        mrs     x9, s3_0_c15_c2_0
        mrs     x9, s2_3_c0_c5_0
        sys     #3, c7, c5, #1, x10
        sys     #0, c7, c5, #0
        sysl    x11, #3, c15, c2, #0
        sysl    x11, #0, c15, c2, #0
        dc      zva, x12
        dc      civac, x12
        dc      ivac, x12
        ic      ivau, x13
        ic      iallu
        tlbi    vmalle1
        at      s1e1r, x14
        nop
        yield
        wfe
        wfi
        sev
        sevl
        xpaclri
        pacia1716
        autib1716
        paciasp
        autiasp
        pacibsp
        autibsp
        paciaz
        autibz
        bti
        bti     c
        bti     j
        bti     jc
        esb
        csdb
        psb     csync
        hint    #0x55
        hint    #0x7f
        clrex
        dmb     ish
        dsb     sy
        isb
        sb
        ptrue   p0.b
        ld1d    {z0.d}, p0/z, [x0]
        st1w    {z1.s}, p1, [x2, #1, mul vl]
        whilelo p2.s, x3, x4
        addvl   sp, sp, #-2
        rdvl    x5, #1
        cntd    x6
        incb    x7
        zero    {za}
        add     x0, x1, x2
        ldr     x0, [x1, #8]
        ldp     x29, x30, [sp], #16
        stp     q0, q1, [sp, #-32]!
        ldrsw   x2, [x3, x4, lsl #2]
        prfm    pldl2strm, [x5]
        prfum   pldl1keep, [x5, #-3]
        ldar    x6, [x7]
        stlr    w8, [x9]
        ldapr   x10, [x11]
        ldapur  w12, [x13, #-5]
        cas     x0, x1, [x2]
        casp    x0, x1, x2, x3, [x4]
        ldadd   w0, w1, [x2]
        swpal   x3, x4, [x5]
        ld64b   x0, [x1]
        st64b   x2, [x3]
        irg     x0, x1
        stg     x0, [x1, #16]
        ldg     x2, [x3]
        stgp    x4, x5, [x6]
        cpyfp   [x0]!, [x1]!, x2!
        cpyfm   [x0]!, [x1]!, x2!
        cpyfe   [x0]!, [x1]!, x2!
        setp    [x0]!, x1!, x2
        setm    [x0]!, x1!, x2
        sete    [x0]!, x1!, x2
        ldraa   x0, [x1, #8]
        pacia   x0, x1
        autdzb  x2
        xpaci   x3
        pacga   x4, x5, x6
        crc32cx w0, w1, x2
        rmif    x0, #3, #2
        setf8   w1
        cfinv
        fmov    d0, x1
        fmov    v2.d[1], x3
        fjcvtzs w4, d5
        fcvt    h0, s1
        bfcvt   h0, s1
        frint32x d0, d1
        fmadd   s0, s1, s2, s3
        fcmp    d0, #0.0
        fccmp   s0, s1, #4, ne
        fcsel   d0, d1, d2, lt
        fmov    s0, #1.0
        scvtf   d0, w1, #3
        movi    v0.16b, #0x55
        fmov    v1.2d, #-2.0
        fmov    v1.4h, #1.5
        dup     v0.4s, w1
        umov    x0, v1.d[1]
        smov    w0, v1.h[3]
        ins     v0.s[1], v2.s[3]
        tbl     v0.16b, {v1.16b, v2.16b}, v3.16b
        zip1    v0.8h, v1.8h, v2.8h
        ext     v0.16b, v1.16b, v2.16b, #7
        aese    v0.16b, v1.16b
        sha256h q0, q1, v2.4s
        sha1h   s0, s1
        eor3    v0.16b, v1.16b, v2.16b, v3.16b
        xar     v0.2d, v1.2d, v2.2d, #5
        sha512h q0, q1, v2.2d
        sm4e    v0.4s, v1.4s
        ld4     {v0.8b-v3.8b}, [x0]
        ld1     {v0.16b}, [x0], #16
        ld1r    {v0.4s}, [x0]
        st1     {v0.s}[3], [x1]
        ld3     {v0.h-v2.h}[7], [x2], x3
        sdot    v0.4s, v1.16b, v2.16b
        fmla    v0.4s, v1.4s, v2.s[1]
        ushr    d0, d1, #3
        sqrdmlah s0, s1, s2
        addp    d0, v1.2d
        mov     b0, v1.b[5]
        bfi     w0, w1, #3, #4
        extr    x0, x1, x2, #13
        movz    x0, #0x1234, lsl #48
        and     x0, x1, #0xff00ff00ff00ff00
        addg    x0, x1, #32, #3
        ccmp    x0, #5, #2, ne
        csinc   w0, w1, w2, eq
        smulh   x0, x1, x2
        umaddl  x0, w1, w2, x3
        rev     x0, x1
        adds    x0, x1, w2, uxtw #2
        .size system_and_hints, .-system_and_hints
