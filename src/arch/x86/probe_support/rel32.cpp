#include "arch/x86/probe_support/rel32.h"

#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace xprobe::arch::x86 {

bool fits_rel32(int64_t value) {
  return value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max();
}

Result<int32_t> rel32_between(uint64_t branch_end, uint64_t target, Rel32Reach reach) {
  const auto rel = static_cast<int64_t>(target - branch_end);
  if (reach == Rel32Reach::Wraps32) return static_cast<int32_t>(static_cast<uint32_t>(target - branch_end));
  if (!fits_rel32(rel))
    return make_error(fmt::format("0x{:x} is out of rel32 reach of a branch ending at 0x{:x}", target, branch_end));
  return static_cast<int32_t>(rel);
}

Status append_rel32_branch(std::vector<uint8_t>& code, uint64_t code_start, std::initializer_list<uint8_t> opcode,
                           uint64_t target, Rel32Reach reach) {
  const uint64_t branch_end = code_start + code.size() + opcode.size() + 4;
  auto rel = rel32_between(branch_end, target, reach);
  if (!rel) return rel.error();
  code.insert(code.end(), opcode);
  uint8_t bytes[4];
  std::memcpy(bytes, &*rel, 4);
  code.insert(code.end(), bytes, bytes + 4);
  return {};
}

}  // namespace xprobe::arch::x86
