#include "arch/arm64/probe_support/trampoline.h"

#include <fmt/format.h>

#include "arch/arm64/probe_support/a64_encode.h"
#include "arch/arm64/probe_support/execution_plan.h"

namespace xprobe::arch::arm64 {

using insn::arm64::Arm64Insn;
using insn::arm64::InsnClass;
using insn::arm64::PacKey;

namespace {

constexpr uint32_t kX30Slot = 30 * 8;
constexpr uint32_t kSpSlot = 31 * 8;
constexpr uint32_t kPcSlot = 32 * 8;
constexpr uint32_t kPstateSlot = 33 * 8;
constexpr uint32_t kSignedX30Slot = 34 * 8;
static_assert(kSignedX30Slot + 8 <= kTrampolineFrame && kTrampolineFrame % 16 == 0);

// Words with LDR Xt literals whose offsets are fixed once the literal pool's place is known.
class Emitter {
 public:
  explicit Emitter(uint64_t base) : base_(base) {}
  uint64_t here() const { return base_ + 4 * words_.size(); }
  void word(uint32_t value) { words_.push_back(value); }
  void load_literal(uint8_t rt, uint64_t value) {
    literals_.emplace_back(words_.size(), value);
    words_.push_back(0x58000000u | (rt & 31u));
  }
  Status branch(std::optional<uint32_t> encoded, uint64_t target) {
    if (!encoded) return make_error(fmt::format("0x{:x} is out of reach of a branch at 0x{:x}", target, here()));
    words_.push_back(*encoded);
    return {};
  }
  void append(const Relocated& relocated) {
    const size_t first = words_.size();
    words_.insert(words_.end(), relocated.words.begin(), relocated.words.end());
    for (const auto& [index, value] : relocated.literals) literals_.emplace_back(first + index, value);
  }
  // The code, then the literals (8-byte aligned), each load pointed at its literal.
  Result<std::vector<uint8_t>> finish() {
    if (words_.size() % 2 != 0) words_.push_back(a64::kNop);
    for (const auto& [index, value] : literals_) {
      const uint64_t literal = base_ + 4 * words_.size();
      auto load = a64::with_imm19(words_[index], base_ + 4 * index, literal);
      if (!load) return make_error("a trampoline literal is out of reach");
      words_[index] = *load;
      words_.push_back(static_cast<uint32_t>(value));
      words_.push_back(static_cast<uint32_t>(value >> 32));
    }
    std::vector<uint8_t> bytes;
    bytes.reserve(4 * words_.size());
    for (uint32_t value : words_) a64::append(bytes, value);
    return bytes;
  }

 private:
  uint64_t base_;
  std::vector<uint32_t> words_;
  std::vector<std::pair<size_t, uint64_t>> literals_;
};

}  // namespace

Status check_relocatable(const Arm64Insn& insn) {
  if (insn.cls != InsnClass::LdrLiteralSimd) {
    const ExecutionPlan plan = plan_execution(insn);
    if (plan.path == ExecutionPath::Refused) return make_error(plan.reason);
  }
  if (insn.cls == InsnClass::Blr && (insn.pac != PacKey::None || insn.rn == 30))
    return make_error("BLR x30: no register is free to hold the target while x30 receives the return address");
  if ((insn.cls == InsnClass::LdrLiteral || insn.cls == InsnClass::LdrswLiteral) && insn.rd == 31)
    return make_error("a literal load into XZR cannot be relocated (XZR cannot be the base of the load)");
  return {};
}

Result<Relocated> relocate(const Arm64Insn& insn, uint64_t at) {
  if (auto ok = check_relocatable(insn); !ok) return ok.error();
  const uint64_t next = insn.address + 4;
  Relocated out;
  auto word = [&](std::optional<uint32_t> encoded, uint64_t target) -> Status {
    if (!encoded)
      return make_error(fmt::format("0x{:x} is out of reach of the relocated {} at 0x{:x}", target,
                                    insn::arm64::class_name(insn.cls), at + 4 * out.words.size()));
    out.words.push_back(*encoded);
    return {};
  };
  auto here = [&] { return at + 4 * out.words.size(); };
  auto literal = [&](uint8_t rt, uint64_t value) {
    out.literals.emplace_back(out.words.size(), value);
    out.words.push_back(0x58000000u | (rt & 31u));
  };
  Status ok;
  switch (insn.cls) {
    case InsnClass::B: ok = word(a64::b(here(), insn.target), insn.target); break;
    case InsnClass::Bl:
      literal(30, next);
      ok = word(a64::b(here(), insn.target), insn.target);
      break;
    case InsnClass::BCond:
    case InsnClass::Cbz:
    case InsnClass::Cbnz:
    case InsnClass::Tbz:
    case InsnClass::Tbnz: {
      const bool tb = insn.cls == InsnClass::Tbz || insn.cls == InsnClass::Tbnz;
      const uint64_t taken = here() + 8;
      if (!(ok = word(tb ? a64::with_imm14(insn.word, here(), taken) : a64::with_imm19(insn.word, here(), taken), taken)))
        break;
      if (!(ok = word(a64::b(here(), next), next))) break;
      ok = word(a64::b(here(), insn.target), insn.target);
      break;
    }
    case InsnClass::Blr:
      literal(30, next);
      out.words.push_back(a64::br(insn.rn));
      break;
    case InsnClass::Adr:
    case InsnClass::Adrp:
      literal(insn.rd, insn.target);
      ok = word(a64::b(here(), next), next);
      break;
    case InsnClass::LdrLiteral:
    case InsnClass::LdrswLiteral:
    case InsnClass::LdrLiteralSimd:
    case InsnClass::PrfmLiteral:
      if (auto moved = a64::literal_at(insn.word, here(), insn.target)) {
        out.words.push_back(*moved);
      } else if (insn.cls == InsnClass::LdrLiteralSimd) {
        return make_error(fmt::format("the literal at 0x{:x} is out of reach of 0x{:x}, and a SIMD&FP load has no "
                                      "general register to take its address",
                                      insn.target, here()));
      } else if (insn.cls != InsnClass::PrfmLiteral) {
        literal(insn.rd, insn.target);
        out.words.push_back(insn.cls == InsnClass::LdrswLiteral ? a64::ldrsw_base(insn.rd, insn.rd)
                            : insn.literal_size == 8            ? a64::ldr_x_base(insn.rd, insn.rd)
                                                                : a64::ldr_w_base(insn.rd, insn.rd));
      }
      ok = word(a64::b(here(), next), next);
      break;
    default:
      out.words.push_back(insn.word);
      ok = word(a64::b(here(), next), next);
      break;
  }
  if (!ok) return ok.error();
  return out;
}

Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to) {
  auto jump = a64::b(from, to);
  if (!jump) return make_error(fmt::format("the trampoline at 0x{:x} is out of B's reach of 0x{:x}", to, from));
  std::vector<uint8_t> bytes;
  a64::append(bytes, *jump);
  return bytes;
}

Result<Trampoline> build_trampoline(const Arm64JumpPatch& patch, const TrampolineTargets& targets) {
  if (targets.descriptors.empty() || targets.descriptors.size() > kMaxProbesPerTrampoline)
    return make_error("a trampoline calls the agent for 1 to 8 probes");
  if (targets.trampoline % 8 != 0) return make_error("a trampoline must be 8-byte aligned");
  Emitter out(targets.trampoline);
  out.word(a64::sub_sp(kTrampolineFrame));
  for (uint8_t reg = 0; reg < 30; reg += 2) out.word(a64::stp_sp(reg, reg + 1, 8u * reg));
  if (patch.strip_link_register) {
    out.word(a64::str_sp(30, kSignedX30Slot));
    out.word(a64::kXpaclri);
  }
  out.word(a64::str_sp(30, kX30Slot));
  out.word(a64::add_from_sp(0, kTrampolineFrame));
  out.word(a64::str_sp(0, kSpSlot));
  out.load_literal(0, patch.reported_pc);
  out.word(a64::str_sp(0, kPcSlot));
  out.word(a64::kMrsX0Nzcv);
  out.word(a64::str_sp(0, kPstateSlot));
  for (uint64_t descriptor : targets.descriptors) {
    out.load_literal(0, descriptor);
    out.word(a64::add_from_sp(1, 0));
    if (auto ok = out.branch(a64::bl(out.here(), targets.agent), targets.agent); !ok) return ok.error();
  }
  out.word(a64::ldr_sp(0, kPstateSlot));
  out.word(a64::kMsrNzcvX0);
  for (uint8_t reg = 0; reg < 30; reg += 2) out.word(a64::ldp_sp(reg, reg + 1, 8u * reg));
  out.word(a64::ldr_sp(30, patch.strip_link_register ? kSignedX30Slot : kX30Slot));
  out.word(a64::add_sp(kTrampolineFrame));
  Trampoline built;
  built.displaced_at.push_back(out.here());
  auto relocated = relocate(patch.displaced, out.here());
  if (!relocated) return relocated.error();
  out.append(*relocated);
  auto code = out.finish();
  if (!code) return code.error();
  if (code->size() > kTrampolineSize) return make_error("trampoline overflow");
  built.code = std::move(*code);
  return built;
}

}  // namespace xprobe::arch::arm64
