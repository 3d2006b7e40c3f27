#pragma once
// Differential testing of the A64 simulator against Unicorn 2: random encodings of every
// simulated class, random registers, flags and pc, random memory behind literal loads; Unicorn
// executes the one instruction and both register files are compared.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "insn/arm64/arm64_insn.h"

struct uc_struct;

namespace xprobe::test {

// The classes generated; Unicorn 2.0 (QEMU 5) has no FEAT_HBC, so BC.cond is tested by the
// unit tests only.
enum class GeneratedClass : uint8_t {
  Adr, Adrp, B, Bl, BCond, Cbz, Cbnz, Tbz, Tbnz, LdrW, LdrX, LdrS, LdrD, LdrQ, Ldrsw, Prfm,
  Br, Blr, Ret, Braa, Blraa, Braaz, Blraaz, Retaa,
  Count,
};
const char* generated_class_name(GeneratedClass cls);

struct DifferentialStats {
  uint64_t cases = 0;
  uint64_t mismatches = 0;
  std::map<std::string, uint64_t> per_class;
  std::vector<std::string> first_mismatches;  // up to 20 descriptions
};

class UnicornOracle {
 public:
  explicit UnicornOracle(uint64_t seed);
  ~UnicornOracle();
  UnicornOracle(const UnicornOracle&) = delete;
  UnicornOracle& operator=(const UnicornOracle&) = delete;

  // Runs `count` random cases of `cls` and adds the outcome to `stats`.
  void run(GeneratedClass cls, uint64_t count, DifferentialStats& stats);

 private:
  uint32_t random_word(GeneratedClass cls);
  void run_one(GeneratedClass cls, DifferentialStats& stats);

  uc_struct* uc_ = nullptr;
  std::mt19937_64 random_;
};

}  // namespace xprobe::test
