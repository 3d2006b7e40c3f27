#include "arch/x86/probe_support/x86_probe_arch.h"

#include <cstring>

#include <fmt/format.h>

#include "arch/x86/probe_support/sim_registers.h"
#include "arch/x86/probe_support/breakpoint.h"
#include "arch/x86/probe_support/execution_plan.h"
#include "arch/x86/probe_support/rel32.h"
#include "sim/x86/branch_sim.h"
#include "support/hex.h"

namespace xprobe::arch::x86 {
namespace {

using insn::x86::FlowKind;
using insn::x86::Mode;
using insn::x86::X86Insn;

constexpr uint8_t kBreakpoint[] = {kBreakpointByte};
constexpr uint64_t kLongestInstruction = 15;
constexpr uint64_t kFourGiB = uint64_t{1} << 32;

class SimMemoryOver final : public sim::x86::SimMemory {
 public:
  explicit SimMemoryOver(ProbeMemory& memory) : memory_(memory) {}
  Status read(uint64_t address, std::span<uint8_t> bytes) override { return memory_.read(address, bytes); }
  Status write(uint64_t address, std::span<const uint8_t> bytes) override { return memory_.write(address, bytes); }

 private:
  ProbeMemory& memory_;
};

class X86ProbedInstruction final : public ProbedInstruction {
 public:
  X86ProbedInstruction(const X86Insn& insn, std::vector<uint8_t> bytes, StepPath path)
      : ProbedInstruction(insn.address, std::move(bytes), path,
                          insn.flow == FlowKind::Call || insn.flow == FlowKind::IndirectCall),
        insn_(insn) {}

  Result<std::vector<uint8_t>> slot_code(uint64_t slot) const override {
    if (insn_.mode == Mode::Long64) return build_slot(bytes(), insn_, address(), slot);
    // 32-bit code has no RIP-relative operands, and its jmp rel32 wraps at 4 GiB: from
    // anywhere in the address space it reaches everywhere.
    if (slot + kSlotSize > kFourGiB) return make_error(fmt::format("slot at 0x{:x} is above 4 GiB", slot));
    std::vector<uint8_t> code = bytes();
    if (auto back = append_rel32_branch(code, slot, {kJmpRel32}, address() + length(), Rel32Reach::Wraps32); !back)
      return back.error();
    return code;
  }

  Status emulate(RegisterBlock& registers, ProbeMemory& memory) const override {
    SimMemoryOver sim_memory(memory);
    auto next = sim::x86::emulate(insn_, address(), to_sim(registers), sim_memory);
    if (!next) return next.error();
    from_sim(*next, registers);
    return {};
  }

 private:
  X86Insn insn_;
};

class X86ProbeArch final : public ProbeArch {
 public:
  X86ProbeArch(insn::Arch arch, DecodeFunction decode) : arch_(arch), decode_(std::move(decode)) {
    if (!decode_) {
      const Mode mode = arch == insn::Arch::I386 ? Mode::Protected32 : Mode::Long64;
      decode_ = [mode](std::span<const uint8_t> bytes, uint64_t address, X86Insn& out) {
        insn::x86::DecoderConfig config;
        config.mode = mode;
        config.vendor = insn::x86::host_vendor();
        return insn::x86::decode(bytes, address, config, out);
      };
    }
  }

  insn::Arch arch() const override { return arch_; }
  std::span<const uint8_t> breakpoint() const override { return kBreakpoint; }
  size_t longest_instruction() const override { return kLongestInstruction; }

  Result<std::unique_ptr<ProbedInstruction>> plan(std::span<const uint8_t> code, uint64_t address) const override {
    X86Insn insn;
    if (decode_(code, address, insn) != insn::x86::DecodeStatus::Ok || insn.length == 0 || insn.length > code.size()) {
      return make_error(fmt::format("Unknown instruction: {}", format_hex_bytes(code)));
    }
    if (insn.mode != mode()) {
      return make_error(fmt::format("decoded in the wrong mode for {} code", insn::arch_name(arch_)));
    }
    ExecutionPlan plan = plan_execution(insn);
    if (plan.path == ExecutionPath::Refused) return make_error(plan.reason);
    const StepPath path = plan.path == ExecutionPath::OutOfLine ? StepPath::OutOfLine : StepPath::Emulate;
    std::vector<uint8_t> bytes(code.begin(), code.begin() + insn.length);
    return std::unique_ptr<ProbedInstruction>(std::make_unique<X86ProbedInstruction>(insn, std::move(bytes), path));
  }

  SlotLayout slot_layout() const override {
    if (arch_ == insn::Arch::I386) return SlotLayout{kSlotSize, kFourGiB, kFourGiB};
    return SlotLayout{kSlotSize, kSlotReach, 0};
  }

  uint64_t instruction_pointer(const RegisterBlock& registers) const override { return registers.rip; }
  void set_instruction_pointer(RegisterBlock& registers, uint64_t value) const override { registers.rip = value; }
  uint64_t stack_pointer(const RegisterBlock& registers) const override { return registers.rsp; }
  uint64_t return_value(const RegisterBlock& registers) const override { return registers.rax; }

  Result<uint64_t> return_address_at_entry(const RegisterBlock& registers, ProbeMemory& memory) const override {
    uint64_t value = 0;
    auto bytes = std::span<uint8_t>(reinterpret_cast<uint8_t*>(&value), word_size());
    if (auto read = memory.read(registers.rsp + kReturnAddressStackOffset, bytes); !read) return read.error();
    return value;
  }

  uint64_t frame_pointer(const RegisterBlock& registers) const override { return registers.rbp; }
  unsigned stack_word_bytes() const override { return word_size(); }

  // The return address, plus what `ret imm16` releases.
  uint64_t longest_return_pop() const override { return word_size() + 0xffff; }
  uint64_t shortest_return_pop() const override { return word_size(); }

 private:
  Mode mode() const { return arch_ == insn::Arch::I386 ? Mode::Protected32 : Mode::Long64; }
  unsigned word_size() const { return arch_ == insn::Arch::I386 ? 4 : 8; }

  insn::Arch arch_;
  DecodeFunction decode_;
};

}  // namespace

std::unique_ptr<ProbeArch> make_probe_arch(insn::Arch arch, DecodeFunction decode) {
  return std::make_unique<X86ProbeArch>(arch, std::move(decode));
}

}  // namespace xprobe::arch::x86
