#include "arch/x86/probe_support/x86_jump_arch.h"

#include <sys/auxv.h>
#include <x86intrin.h>

#include "arch/x86/probe_support/execution_plan.h"
#include "arch/x86/probe_support/jump_patch.h"
#include "arch/x86/probe_support/trampoline.h"

namespace xprobe::arch::x86 {
namespace {

struct X86DisplacedCode final : DisplacedCode {
  explicit X86DisplacedCode(JumpPatchPlan decoded) : plan(std::move(decoded)) {}
  JumpPatchPlan plan;
};

class X86_64JumpArch final : public JumpArch {
 public:
  insn::Arch arch() const override { return insn::Arch::X86_64; }
  Result<JumpPlan> plan(const JumpPatchFunction& function, uint64_t address, JumpPatchPlace place) const override {
    auto decoded = plan_jump_patch(function, address, place);
    if (!decoded) return decoded.error();
    JumpPlan plan;
    plan.address = decoded->address;
    plan.length = decoded->length;
    plan.redirects = decoded->redirects;
    plan.displaced = std::make_shared<const X86DisplacedCode>(std::move(*decoded));
    return plan;
  }
  // rel32 reach, less a margin for the area's own size (as for out-of-line slots).
  uint64_t reach() const override { return kSlotReach; }
  uint64_t trampoline_size() const override { return kTrampolineSize; }
  size_t max_probes_per_trampoline() const override { return kMaxProbesPerTrampoline; }
  Result<Trampoline> build_trampoline(const JumpPlan& plan, const TrampolineTargets& targets) const override {
    const auto* displaced = dynamic_cast<const X86DisplacedCode*>(plan.displaced.get());
    if (!displaced) return make_error("the jump plan was not made by the x86-64 planner");
    return x86::build_trampoline(displaced->plan, targets);
  }
  Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to) const override { return x86::build_jump(from, to); }
  size_t redirect_field_size() const override { return 4; }  // rel32
  Result<std::vector<uint8_t>> build_redirect(const BranchRedirect& redirect, uint64_t to) const override {
    return x86::build_redirect(redirect, to);
  }
  // The agent stamps records with rdtsc (agent_arch.h).
  uint64_t read_clock() const override { return __rdtsc(); }
  // rdfsbase faults unless the kernel set CR4.FSGSBASE, which it says with HWCAP2_FSGSBASE
  // (Linux 5.9 and later); the traced process runs on this kernel.
  bool agent_reads_thread_pointer() const override { return (getauxval(AT_HWCAP2) & (1ul << 1)) != 0; }
};

}  // namespace

const JumpArch& x86_64_jump_arch() {
  static const X86_64JumpArch arch;
  return arch;
}

}  // namespace xprobe::arch::x86
