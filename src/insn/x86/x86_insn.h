#pragma once
// The facts the x86 decoder extracts from one instruction. Bytes in, facts out: nothing
// here knows about probes or processes.
#include <cstdint>

namespace xprobe::insn::x86 {

enum class Mode : uint8_t { Long64, Protected32 };

// Where Intel and AMD processors disagree on decoding (a 66-prefixed near branch in
// 64-bit mode: Intel ignores the prefix, AMD honours it and uses a 16-bit displacement).
enum class Vendor : uint8_t { Intel, Amd };

enum class FlowKind : uint8_t {
  None,          // falls through to the next instruction
  Jmp,           // relative jmp (EB, E9)
  Jcc,           // relative conditional jump (7x, 0F 8x)
  Call,          // relative call (E8)
  Ret,           // near return (C3, C2)
  Loop,          // loop/loope/loopne/jcxz/jecxz/jrcxz (E0-E3)
  IndirectJmp,   // FF /4, and FF /5 far in memory is FarTransfer
  IndirectCall,  // FF /2
  Interrupt,     // int3, int n, into, int1
  Syscall,       // syscall, sysenter, sysexit, sysret
  Iret,          // iret/iretd/iretq
  FarTransfer,   // far jmp/call/ret (EA, 9A, FF /3, FF /5, CA, CB)
  Ud,            // ud0, ud1, ud2: raise #UD by design
};

enum class Encoding : uint8_t { Legacy, Rex2Unused, Vex, Evex, Xop, ThreeDNow };

// Opcode maps as the manuals number them. For VEX/EVEX the map comes from mmmmm / mmm.
enum class OpcodeMap : uint8_t {
  Primary,   // one-byte opcodes
  Map0F,
  Map0F38,
  Map0F3A,
  Map3DNow,  // 0F 0F modrm [sib] [disp] imm8-suffix; opcode holds the suffix byte
  Evex5,     // AVX512-FP16 map 5
  Evex6,     // AVX512-FP16 map 6
  Xop8,
  Xop9,
  XopA,
};

// Attribute bits a probe engine needs to know about.
namespace attr {
inline constexpr uint32_t kStackImplicit = 1u << 0;     // push/pop/call/ret/enter/leave/pushf...
inline constexpr uint32_t kPrivileged = 1u << 1;        // CPL0 only: hlt, lgdt, mov cr, in/out (IOPL), wrmsr...
inline constexpr uint32_t kChangesCodeSegment = 1u << 2;  // far jmp/call/ret, iret, syscall family
inline constexpr uint32_t kLockPrefix = 1u << 3;
inline constexpr uint32_t kRepPrefix = 1u << 4;
inline constexpr uint32_t kReadsFlags = 1u << 5;        // jcc, cmovcc, setcc, adc, sbb, pushf...
inline constexpr uint32_t kSerializing = 1u << 6;       // cpuid, iret, ...
inline constexpr uint32_t kFpuOrSimd = 1u << 7;         // x87, MMX, SSE, AVX
inline constexpr uint32_t kSegmentOverride = 1u << 8;
inline constexpr uint32_t kIoPort = 1u << 9;            // in/out/ins/outs
inline constexpr uint32_t kUsesFsGs = 1u << 10;         // fs:/gs: override or rd/wrfsbase...
inline constexpr uint32_t kTransactional = 1u << 11;    // xbegin/xend/xabort/xtest
inline constexpr uint32_t kBndPrefix = 1u << 12;        // F2 on a branch (MPX BND)
}  // namespace attr

struct Prefixes {
  uint8_t count = 0;        // number of legacy prefix bytes (0x66, 0x67, F0, F2, F3, segments)
  uint8_t segment = 0;      // last segment override byte (0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65) or 0
  bool operand_size = false;  // 66 present
  bool address_size = false;  // 67 present
  bool lock = false;          // F0
  bool rep = false;           // F3 (last of F2/F3 wins, as the processor does)
  bool repne = false;         // F2
  uint8_t mandatory = 0;      // 0, 0x66, 0xF2 or 0xF3 when it selected the opcode
};

struct X86Insn {
  uint64_t address = 0;
  uint8_t length = 0;
  Mode mode = Mode::Long64;
  Encoding encoding = Encoding::Legacy;
  OpcodeMap map = OpcodeMap::Primary;
  Prefixes prefixes;

  uint8_t rex = 0;            // REX byte (0x40-0x4f) or 0
  // VEX/EVEX/XOP payload, normalised (R/X/B/R'/V' already un-inverted).
  uint8_t vex_rxb = 0;        // VEX/XOP/EVEX R, X, B as bits 2, 1, 0 and EVEX R' as bit 3 (un-inverted):
                              // the register-number extensions that REX carries for legacy encodings
  uint8_t vex_l = 0;          // VEX.L or EVEX.L'L
  bool vex_w = false;
  uint8_t vex_vvvv = 0;       // including EVEX.V' as bit 4
  uint8_t vex_pp = 0;
  uint8_t evex_aaa = 0;
  bool evex_z = false;
  bool evex_b = false;

  uint8_t opcode = 0;         // the opcode byte within `map`
  uint8_t opcode_offset = 0;  // offset of that byte in the instruction

  bool has_modrm = false;
  uint8_t modrm = 0;
  uint8_t modrm_offset = 0;
  bool has_sib = false;
  uint8_t sib = 0;

  uint8_t disp_offset = 0;
  uint8_t disp_size = 0;      // 0, 1, 2, 4 or 8 (moffs)
  int64_t disp = 0;           // sign-extended (moffs: zero-extended). EVEX disp8 is the raw byte:
                              // the processor scales it by the operand's N (compressed disp8*N);
                              // a RIP-relative operand always has a disp32, which is not scaled.

  uint8_t imm_offset = 0;
  uint8_t imm_size = 0;       // first immediate, in bytes
  int64_t imm = 0;            // sign-extended as the instruction uses it
  uint8_t imm2_offset = 0;
  uint8_t imm2_size = 0;      // second immediate (enter, far pointers' selector, extrq/insertq)
  uint64_t imm2 = 0;

  bool rip_relative = false;  // a ModRM memory operand addressed relative to the next instruction
  FlowKind flow = FlowKind::None;
  bool has_rel_target = false;
  uint64_t rel_target = 0;    // address + length + relative displacement, truncated to the operand size
  uint32_t attributes = 0;    // attr:: bits

  uint8_t modrm_mod() const { return modrm >> 6; }
  uint8_t modrm_reg() const { return (modrm >> 3) & 7; }
  uint8_t modrm_rm() const { return modrm & 7; }
  bool has(uint32_t attribute) const { return (attributes & attribute) != 0; }
};

enum class DecodeStatus : uint8_t {
  Ok,
  Truncated,  // the bytes end before the instruction does
  TooLong,    // more than 15 bytes
  Invalid,    // undefined or invalid in this mode (or a prefix/encoding that makes it #UD)
};

}  // namespace xprobe::insn::x86
