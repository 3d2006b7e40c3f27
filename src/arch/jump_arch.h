#pragma once
// What the jump-optimized engine (probe/engine/jump_engine.h) needs to know about the
// architecture of the code it patches, behind one interface: whether a place may become a
// jump to a trampoline and which instructions the jump displaces (patch planning), the
// trampoline that saves the registers, calls the in-process agent and runs the displaced
// instructions (the trampoline writer, which follows the agent's calling convention), the
// jump and branch encodings, and the clock the agent stamps its records with. The engine uses
// nothing else; arch/registry.h gives the implementation for a process's code.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::arch {

struct CodeRange {
  std::span<const uint8_t> bytes;  // as in the file (no breakpoints in it)
  uint64_t start = 0;              // runtime address
};

// What a branch of the function reaches outside the function and its known parts.
enum class ForeignCode {
  FunctionStart,  // another function's first instruction or a PLT stub: a tail call
  Fragment,       // a piece of this function no symbol names (a stripped foo.cold), given
  Unknown,        // nothing known: the function cannot be proven
};
struct ForeignTarget {
  ForeignCode kind = ForeignCode::Unknown;
  CodeRange fragment;  // Fragment: its bytes, from the unwind tables' extent
};

// The probed function as its file describes it: what a planner needs to prove that nothing
// arrives inside the bytes a jump displaces.
struct JumpPatchFunction {
  CodeRange code;                       // the whole function
  std::vector<CodeRange> split_parts;   // its .cold/.part pieces: their branches count too
  std::vector<uint64_t> other_symbols;  // runtime addresses of other symbols near the function
  std::vector<uint64_t> landing_pads;   // runtime addresses of its C++ landing pads
  // A branch to code outside the function and its parts: what is there. Without it, every
  // such branch makes the function unprovable (a stripped binary's cold parts are found this way).
  std::function<ForeignTarget(uint64_t target)> foreign;
};

enum class JumpPatchPlace { FunctionEntry, ReturnSite };

// A branch outside the displaced bytes that lands on a displaced instruction: its
// displacement (its last JumpArch::redirect_field_size() bytes) must lead to that
// instruction's copy in the trampoline instead.
struct BranchRedirect {
  uint64_t branch = 0;  // the branch instruction
  uint64_t length = 0;
  size_t displaced = 0;  // index of the displaced instruction it lands on
};

// The displaced instructions as the architecture decoded them: only its trampoline writer
// reads them.
class DisplacedCode {
 public:
  virtual ~DisplacedCode() = default;
};

struct JumpPlan {
  uint64_t address = 0;
  uint64_t length = 0;  // bytes the displaced instructions cover (at least the jump's)
  std::vector<BranchRedirect> redirects;
  std::shared_ptr<const DisplacedCode> displaced;
};

// Where the trampoline goes and whom it calls. The agent's calling convention: the trampoline
// saves the thread's registers as the first words of the architecture's ptrace register block
// (the layout the agent and the fetch programs index) and calls the agent's entry once per
// descriptor with (descriptor, saved block) in the C calling convention.
struct TrampolineTargets {
  uint64_t trampoline = 0;            // where the trampoline's bytes go
  std::vector<uint64_t> descriptors;  // the agent's first argument, one call each
  uint64_t agent = 0;                 // the agent's entry (within reach() of the trampoline)
};

struct Trampoline {
  std::vector<uint8_t> code;
  std::vector<uint64_t> displaced_at;  // where each displaced instruction's copy starts
};

class JumpArch {
 public:
  virtual ~JumpArch() = default;
  virtual insn::Arch arch() const = 0;

  // The plan, or why the place must stay a breakpoint.
  virtual Result<JumpPlan> plan(const JumpPatchFunction& function, uint64_t address, JumpPatchPlace place) const = 0;
  // Largest distance between a patch and its trampoline, and a trampoline and the agent.
  virtual uint64_t reach() const = 0;
  // Bytes a trampoline takes at most (with max_probes_per_trampoline() calls).
  virtual uint64_t trampoline_size() const = 0;
  virtual size_t max_probes_per_trampoline() const = 0;
  virtual Result<Trampoline> build_trampoline(const JumpPlan& plan, const TrampolineTargets& targets) const = 0;
  // The bytes that replace the displaced instruction(s): a jump from `from` to `to`.
  virtual Result<std::vector<uint8_t>> build_jump(uint64_t from, uint64_t to) const = 0;
  virtual size_t redirect_field_size() const = 0;
  // The displacement field that makes `redirect`'s branch lead to `to`.
  virtual Result<std::vector<uint8_t>> build_redirect(const BranchRedirect& redirect, uint64_t to) const = 0;
  // The counter the agent stamps records with (AgentRecord::tsc), read by the tracer now.
  virtual uint64_t read_clock() const = 0;
  // Whether the agent may read its thread pointer on this machine (agent_arch.h's
  // read_thread_pointer), and so remember thread ids per thread (AgentRingHeader::tid_cache).
  virtual bool agent_reads_thread_pointer() const { return false; }
};

}  // namespace xprobe::arch
