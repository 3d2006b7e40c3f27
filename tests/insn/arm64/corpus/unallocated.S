// Words from unallocated rows of the A64 index (and UDF), which objdump prints as .inst or
// udf and xprobe must refuse as unknown instructions.
        .text
        .globl unallocated_words
        .type unallocated_words, %function
unallocated_words:
        .inst 0x00000000   // UDF #0
        .inst 0x0000dead   // UDF #0xdead
        .inst 0x00ff0000   // reserved space, op0 = 0
        .inst 0x02000000   // op1 = 0001
        .inst 0x06000000   // op1 = 0011
        .inst 0x55000000   // conditional branch with o1 = 1
        .inst 0x74000000   // branch space op0 = x11
        .inst 0xd4000000   // exception generation with LL = 00
        .inst 0xd4200001   // BRK with LL = 01
        .inst 0xd4c00000   // exception generation opc = 110
        .inst 0xd63f0001   // BLR with op4 != 0
        .inst 0xd6bf0000   // opc = 0101 with Rn = 0 (DRPS needs Rn = 31)
        .inst 0xd65f0be1   // RETAA with Rn != 31
        .inst 0xd6ff03e0   // branch register opc = 0111
        .inst 0xd503301f   // barrier op2 = 000
        .inst 0xd50040ff   // PSTATE op1 = 000, op2 = 111
        .inst 0xd50640ff   // PSTATE op1 = 110
        .inst 0x13800000 | (1 << 21)  // EXTR with op21 = 01
        .inst 0x12800000 | (1 << 29)  // move wide opc = 01
        .inst 0x33000000 | (3 << 29)  // bitfield opc = 11
        .inst 0x1200fc00   // logical immediate, 32-bit, imms = 111111 (reserved)
        .inst 0x92400000 | (0x3f << 10) | (1 << 22) // logical immediate, 64-bit, all ones (reserved)
        .inst 0x9e620000 | (1 << 29)  // FP conversion with S = 1
        .inst 0x1e2f4000   // FP data-processing 1 source, FRINT opcode 001101
        .inst 0x1ea08000 | (1 << 12) // FP data-processing 2 source opcode 1001
        .inst 0x1ac03400   // data-processing 2 source opcode 001101
        .inst 0x5ac00c00   // REV (64-bit opcode) with sf = 0
        .inst 0x9b400000 | (1 << 15) // SMULH with o0 = 1
        .inst 0x3a400800 | (1 << 10) // conditional compare with o2 = 1
        .inst 0x1a800000 | (1 << 11) // conditional select op2 = 1x
        .inst 0x8b200000 | (5 << 10) // add extended with imm3 = 5
        .inst 0x8b000000 | (3 << 22) // add shifted with shift = 11
        .inst 0xdf000000   // SIMD&FP space op0 = 1101 (unallocated)
        .inst 0xb820c000   // atomic memory op o3 = 1 opc = 100 without A (LDAPR needs A = 1)
        .inst 0xb8a0c000   // LDAPR with Rs != 11111
        .inst 0xf8600800 | (1 << 13) // register offset with option<1> = 0
        .inst 0xb8c00c00   // pre-index size = 10 opc = 11
        .inst 0xf9800400 & ~(1 << 24) // pre/post PRFM form (size 11 opc 10 post-index)
        .inst 0xe9000000   // load/store pair opc = 11
        .inst 0x68000000   // no-allocate pair opc = 01 (no LDNPSW)
        .inst 0xdc000000   // LDR literal SIMD opc = 11
        .inst 0x0c401000   // LD1 multiple with opcode 0001
        .inst 0x0c400c00   // LD4 with size = 11 and Q = 0
        .inst 0x0d40b400   // LD3 single, doubleword lanes with S = 1
        .inst 0x0d00c000   // LD1R form without L (store)
        .inst 0x09000000   // load/store space 0000 with bit 24 (unallocated)
        .inst 0x1e670000   // FMOV between W and D (sf = 0, ftype = 01)
        .inst 0x5e038793   // scalar shift by immediate, unallocated opcode
        .inst 0x5e04d771   // scalar shift by immediate, unallocated opcode
        .inst 0x0e02fe1c   // vector shift by immediate, FCVTZS with immh = 0001
        .inst 0x0e0384df   // vector shift by immediate, unallocated opcode
        .inst 0x08c0e4a2   // LDARB with Rs/Rt2 not all ones (CONSTRAINED UNPREDICTABLE)
        .inst 0x191696cf   // CPYFP with Rs = Rn
        .inst 0x1d0fc7fe   // CPYP with Rn = 31
        .inst 0x68cb51ce   // LDPSW post-index writing back into a loaded register
        .inst 0x6942705c   // LDPSW with Rt = Rt2
        .size unallocated_words, .-unallocated_words
