#pragma once
// One decoded A64 instruction, classified by what probe code must do with it.
// The classification follows the Arm ARM's A64 encoding index (top-level groups, then the
// per-group tables); it is written from the manual, not from another project's tables.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace xprobe::insn::arm64 {

// What a probe engine does with the instruction. The kind names in decode output are
// class_name() of these values.
enum class InsnClass : uint8_t {
  Unallocated,   // unallocated or permanently undefined (UDF): "Unknown instruction"
  Adr,           // pc-relative, simulated
  Adrp,
  B,
  Bl,
  BCond,         // B.cond and BC.cond (the latter only hints "consistent"; same semantics)
  Cbz,
  Cbnz,
  Tbz,
  Tbnz,
  LdrLiteral,      // LDR (literal) into a W or X register
  LdrLiteralSimd,  // LDR (literal) into an S, D or Q register
  LdrswLiteral,
  PrfmLiteral,
  Br,            // register branches, simulated (PAC forms included, see PacKey)
  Blr,
  Ret,
  Exclusive,     // load/store-exclusive: the checker refuses it and anything inside a sequence
  NeverProbe,    // never probed; `never` says which kind (arch/arm64/arm64_probe_policy.h why)
  Hint,          // HINT space: NOP, BTI, PACIASP, AUTIASP, ... (safe out of line)
  Sve,           // SVE/SME space: allocation not validated by this decoder, so refused
  Other,         // everything else: safe to execute out of line
};

enum class PacKey : uint8_t { None, A, B };

enum class NeverReason : uint8_t {
  None,
  Breakpoint,         // BRK
  Halt,               // HLT
  SupervisorCall,     // SVC
  HypervisorCall,     // HVC
  SecureMonitorCall,  // SMC
  ExceptionReturn,    // ERET, ERETAA, ERETAB
  DebugRestore,       // DRPS
  DebugStateChange,   // DCPS1/2/3
  DebugRegister,      // MSR/MRS of the debug and trace registers (op0 = 2)
  PrivilegedRegisterWrite,  // MSR to a register of EL1 or higher (op1 != 3)
  PrivilegedRegisterRead,   // MRS of an EL1+ register outside the ID space Linux emulates at EL0
  InterruptMaskWrite,       // MSR DAIF / MSR DAIFSet / MSR DAIFClr
  PrivilegedPstateWrite,    // MSR SPSel, PAN, UAO, ALLINT, PM (immediate)
  PrivilegedSystemInsn,     // SYS/SYSL/SYSP of EL1 or higher (TLBI, AT, privileged DC/IC)
};

enum class HintKind : uint8_t {
  None,
  Nop,
  Yield,
  WaitForEvent,      // WFE
  WaitForInterrupt,  // WFI
  SendEvent,         // SEV, SEVL
  Bti,
  PacSign,           // PACIASP, PACIBSP, PACIAZ, PACIBZ, PACIA1716, PACIB1716
  PacAuth,           // AUTIASP, ... AUTIB1716
  PacStrip,          // XPACLRI
  Other,             // ESB, PSB, TSB, CSDB, DGH, CLRBHB, and the unnamed hints (architectural NOPs)
};

enum class ExclusiveKind : uint8_t { None, Load, Store };

// Register numbers are 0..31; 31 means XZR/WZR except where noted (SP never occurs in the
// simulated classes).
struct Arm64Insn {
  uint32_t word = 0;
  uint64_t address = 0;
  InsnClass cls = InsnClass::Unallocated;

  // pc-relative classes: the signed byte offset from the instruction (ADRP: from its 4 KiB
  // page, already shifted by 12) and the absolute target or literal address.
  int64_t offset = 0;
  uint64_t target = 0;
  bool has_target = false;

  uint8_t rd = 0;      // destination: ADR/ADRP Rd, literal loads Rt (a V register for LdrLiteralSimd)
  uint8_t rn = 0;      // tested register (CBZ/TBZ Rt) or branch register (BR/BLR/RET Rn)
  uint8_t rm = 31;     // PAC modifier register (BRAA/BLRAA Xm); 31 with pac_zero_modifier means "zero"
  bool is_64bit = false;   // CBZ/CBNZ sf; LDR literal into an X register
  uint8_t cond = 0;        // BCond
  uint8_t test_bit = 0;    // TBZ/TBNZ bit number 0..63
  uint8_t literal_size = 0;  // bytes read by LDR/LDRSW literal (4, 8 or 16)
  bool consistent_hint = false;  // BC.cond

  PacKey pac = PacKey::None;        // BRAA/BRAB/BLRAA/.../RETAA/RETAB
  bool pac_zero_modifier = false;   // BRAAZ/BRABZ/BLRAAZ/BLRABZ
  bool pac_sp_modifier = false;     // RETAA/RETAB authenticate with SP

  ExclusiveKind exclusive = ExclusiveKind::None;
  bool exclusive_pair = false;

  // FEAT_MOPS CPY*/SET* (prologue, main or epilogue): the three must execute consecutively.
  bool memory_copy_set = false;

  NeverReason never = NeverReason::None;
  HintKind hint = HintKind::None;
  bool landing_pad = false;  // a valid BTI target (BTI, PACIASP, PACIBSP)
};

// Decodes one word (the value, i.e. the little-endian bytes already assembled).
// Unallocated encodings yield cls == Unallocated (never nullopt: the word is always "decoded").
Arm64Insn decode(uint32_t word, uint64_t address);

// Decodes the first 4 bytes (little-endian, memory order); nullopt when fewer than 4.
std::optional<Arm64Insn> decode(std::span<const uint8_t> bytes, uint64_t address);

// The word's bytes in memory order, as refusals print them.
uint32_t load_word(std::span<const uint8_t, 4> bytes);

// "b", "bcond", "ldr_lit", ... (arm64_summary.h lists them with the policy behind them).
std::string_view class_name(InsnClass cls);

// Classes the simulator handles (pc-relative and register branches).
bool is_simulated(InsnClass cls);

}  // namespace xprobe::insn::arm64
