#include "supervisor/patch_ledger.h"

#include <iterator>

namespace xprobe::supervisor {

void PatchLedger::claim(const Participant& owner, uint64_t begin, uint64_t end) {
  claims_.emplace(begin, Claim{end, &owner});
  if (end - begin > longest_) longest_ = end - begin;
}

void PatchLedger::release(const Participant& owner, uint64_t begin) {
  auto [first, last] = claims_.equal_range(begin);
  for (auto it = first; it != last; ++it) {
    if (it->second.owner != &owner) continue;
    claims_.erase(it);
    return;
  }
}

void PatchLedger::release_all(const Participant& owner) {
  for (auto it = claims_.begin(); it != claims_.end();) it = it->second.owner == &owner ? claims_.erase(it) : std::next(it);
}

bool PatchLedger::claimed_by_other(const Participant& asking, uint64_t begin, uint64_t end) const {
  // Only a claim that starts at most longest_ bytes before `begin` can reach into it.
  for (auto it = claims_.lower_bound(begin > longest_ ? begin - longest_ : 0); it != claims_.end() && it->first < end; ++it)
    if (it->second.owner != &asking && it->second.end > begin) return true;
  return false;
}

}  // namespace xprobe::supervisor
