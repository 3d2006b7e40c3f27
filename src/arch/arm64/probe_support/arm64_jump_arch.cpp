#include "arch/arm64/probe_support/arm64_jump_arch.h"

#include "arch/arm64/probe_support/execution_plan.h"
#include "arch/arm64/probe_support/jump_patch.h"
#include "arch/arm64/probe_support/trampoline.h"

namespace xprobe::arch::arm64 {
namespace {

struct Arm64DisplacedCode final : DisplacedCode {
  explicit Arm64DisplacedCode(Arm64JumpPatch decoded) : patch(std::move(decoded)) {}
  Arm64JumpPatch patch;
};

class AArch64JumpArch final : public JumpArch {
 public:
  insn::Arch arch() const override { return insn::Arch::AArch64; }
  Result<JumpPlan> plan(const JumpPatchFunction& function, uint64_t address, JumpPatchPlace place) const override {
    auto decoded = plan_jump_patch(function, address, place);
    if (!decoded) return decoded.error();
    JumpPlan plan;
    plan.address = decoded->address;
    plan.length = kJumpPatchSize;
    plan.displaced = std::make_shared<const Arm64DisplacedCode>(std::move(*decoded));
    return plan;
  }
  // B's reach, less a margin for the area's own size (as for out-of-line slots).
  uint64_t reach() const override { return kSlotReach; }
  uint64_t trampoline_size() const override { return kTrampolineSize; }
  size_t max_probes_per_trampoline() const override { return kMaxProbesPerTrampoline; }
  Result<Trampoline> build_trampoline(const JumpPlan& plan, const TrampolineTargets& targets) const override {
    const auto* displaced = dynamic_cast<const Arm64DisplacedCode*>(plan.displaced.get());
    if (!displaced) return make_error("the jump plan was not made by the AArch64 planner");
    return arm64::build_trampoline(displaced->patch, targets);
  }
  Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to) const override { return arm64::build_jump(from, to); }
  // One instruction is displaced: no branch lands inside it, none is ever redirected.
  size_t redirect_field_size() const override { return kJumpPatchSize; }
  Result<std::vector<uint8_t>> build_redirect(const BranchRedirect&, uint64_t) const override {
    return make_error("AArch64 jump plans redirect no branch");
  }
  // The agent stamps records with CNTVCT_EL0 (arm64_agent_arch.h).
  uint64_t read_clock() const override {
    uint64_t count;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(count) : : "memory");
    return count;
  }
};

}  // namespace

const JumpArch& aarch64_jump_arch() {
  static const AArch64JumpArch arch;
  return arch;
}

}  // namespace xprobe::arch::arm64
