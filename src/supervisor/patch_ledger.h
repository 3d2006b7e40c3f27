#pragma once
// Which bytes of the traced process's code each engine has changed: a breakpoint and a jump
// must never share a byte (each would break the other). An engine claims what it patches and
// asks before it patches; neither needs to know the other.
#include <cstdint>
#include <map>

namespace xprobe::supervisor {

class Participant;

class PatchLedger {
 public:
  void claim(const Participant& owner, uint64_t begin, uint64_t end);
  void release(const Participant& owner, uint64_t begin);
  void release_all(const Participant& owner);
  void clear() {
    claims_.clear();
    longest_ = 0;
  }
  // Whether a participant other than `asking` claimed a byte of [begin, end).
  bool claimed_by_other(const Participant& asking, uint64_t begin, uint64_t end) const;

 private:
  struct Claim {
    uint64_t end;
    const Participant* owner;
  };
  std::multimap<uint64_t, Claim> claims_;  // by start
  uint64_t longest_ = 0;                     // the longest claim's length
};

}  // namespace xprobe::supervisor
