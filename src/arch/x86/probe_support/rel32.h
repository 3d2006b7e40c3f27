#pragma once
// Branches with a 32-bit displacement (jmp/jcc/call rel32), encoded in one place: out-of-line
// slots jump back with one, trampolines are entered, left and relocate branches with them,
// redirected branches get a new one.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "support/result.h"

namespace xprobe::arch::x86 {

inline constexpr uint8_t kJmpRel32 = 0xe9;
inline constexpr uint64_t kJmpRel32Size = 5;

bool fits_rel32(int64_t value);

// How a rel32 reaches: in 64-bit code within +-2 GiB; in 32-bit code it wraps at 4 GiB, so
// from anywhere in the address space it reaches everywhere.
enum class Rel32Reach { Signed32, Wraps32 };

// The displacement from the end of a branch at `branch_end` to `target`; an error when it
// does not fit.
Result<int32_t> rel32_between(uint64_t branch_end, uint64_t target, Rel32Reach reach = Rel32Reach::Signed32);

// Appends `opcode` and its rel32 to `code`, which starts at address `code_start`: a branch
// at code_start + code.size() to `target`.
Status append_rel32_branch(std::vector<uint8_t>& code, uint64_t code_start, std::initializer_list<uint8_t> opcode,
                           uint64_t target, Rel32Reach reach = Rel32Reach::Signed32);

}  // namespace xprobe::arch::x86
