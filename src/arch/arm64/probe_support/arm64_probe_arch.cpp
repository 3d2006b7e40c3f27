#include "arch/arm64/probe_support/arm64_probe_arch.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "arch/arm64/probe_support/breakpoint.h"
#include "arch/arm64/probe_support/emulation.h"
#include "arch/arm64/probe_support/execution_plan.h"

namespace xprobe::arch::arm64 {
namespace {

static_assert(sizeof(RegisterBlock) == sizeof(UserPtRegs), "an arm64 tracer's register block is user_pt_regs");

constexpr size_t kX29 = 29;
constexpr size_t kX30 = 30;
constexpr size_t kX0 = 0;

UserPtRegs from_block(const RegisterBlock& block) {
  UserPtRegs regs;
  std::copy(std::begin(block.regs), std::end(block.regs), regs.regs.begin());
  regs.sp = block.sp;
  regs.pc = block.pc;
  regs.pstate = block.pstate;
  return regs;
}

void to_block(const UserPtRegs& regs, RegisterBlock& block) {
  std::copy(regs.regs.begin(), regs.regs.end(), std::begin(block.regs));
  block.sp = regs.sp;
  block.pc = regs.pc;
  block.pstate = regs.pstate;
}

class MemoryReaderOver final : public sim::arm64::MemoryReader {
 public:
  explicit MemoryReaderOver(ProbeMemory& memory) : memory_(memory) {}
  bool read(uint64_t address, void* buffer, size_t length) override {
    return static_cast<bool>(memory_.read(address, std::span<uint8_t>(static_cast<uint8_t*>(buffer), length)));
  }

 private:
  ProbeMemory& memory_;
};

class Arm64ProbedInstruction final : public ProbedInstruction {
 public:
  Arm64ProbedInstruction(const insn::arm64::Arm64Insn& insn, std::vector<uint8_t> bytes, StepPath path)
      : ProbedInstruction(insn.address, std::move(bytes), path,
                          insn.cls == insn::arm64::InsnClass::Bl || insn.cls == insn::arm64::InsnClass::Blr),
        insn_(insn) {}

  Result<std::vector<uint8_t>> slot_code(uint64_t slot) const override { return build_slot(insn_, slot); }

  Status emulate(RegisterBlock& registers, ProbeMemory& memory) const override {
    MemoryReaderOver reader(memory);
    auto next = arm64::emulate(insn_, from_block(registers), reader);
    if (!next) return next.error();
    to_block(*next, registers);
    return {};
  }

 private:
  insn::arm64::Arm64Insn insn_;
};

class Arm64ProbeArch final : public ProbeArch {
 public:
  insn::Arch arch() const override { return insn::Arch::AArch64; }
  std::span<const uint8_t> breakpoint() const override { return kBreakpointBytes; }
  size_t longest_instruction() const override { return kInstructionSize; }

  Result<std::unique_ptr<ProbedInstruction>> plan(std::span<const uint8_t> code, uint64_t address) const override {
    if (address % kInstructionSize != 0) {
      return make_error(
          fmt::format("0x{:x} is not a multiple of 4; A64 instructions are 4-byte aligned (-EILSEQ)", address));
    }
    auto insn = insn::arm64::decode(code, address);
    if (!insn) return make_error(fmt::format("cannot read the 4 bytes of the instruction at 0x{:x}", address));
    ExecutionPlan plan = plan_execution(*insn);
    if (plan.path == ExecutionPath::Refused) return make_error(plan.reason);
    const StepPath path = plan.path == ExecutionPath::OutOfLine ? StepPath::OutOfLine : StepPath::Emulate;
    std::vector<uint8_t> bytes(code.begin(), code.begin() + kInstructionSize);
    return std::unique_ptr<ProbedInstruction>(std::make_unique<Arm64ProbedInstruction>(*insn, std::move(bytes), path));
  }

  SlotLayout slot_layout() const override { return SlotLayout{kSlotSize, kSlotReach, 0}; }

  uint64_t instruction_pointer(const RegisterBlock& registers) const override { return registers.pc; }
  void set_instruction_pointer(RegisterBlock& registers, uint64_t value) const override { registers.pc = value; }
  uint64_t stack_pointer(const RegisterBlock& registers) const override { return registers.sp; }
  uint64_t return_value(const RegisterBlock& registers) const override { return registers.regs[kX0]; }
  Result<uint64_t> return_address_at_entry(const RegisterBlock& registers, ProbeMemory&) const override {
    return registers.regs[kX30];
  }
  uint64_t frame_pointer(const RegisterBlock& registers) const override { return registers.regs[kX29]; }
  unsigned stack_word_bytes() const override { return 8; }
  // A returning function has restored sp to its value at entry (AAPCS64): nothing is popped.
  uint64_t longest_return_pop() const override { return 0; }
  uint64_t shortest_return_pop() const override { return 0; }
};

}  // namespace

std::unique_ptr<ProbeArch> make_probe_arch() { return std::make_unique<Arm64ProbeArch>(); }

}  // namespace xprobe::arch::arm64
