#pragma once
// Differential testing of the A64 simulator against Unicorn 2: random encodings of every
// simulated class, random registers, flags and pc, random memory behind literal loads; Unicorn
// executes the one instruction and both register files are compared.
//
// Mapping pages costs Unicorn ~90 us, executing one instruction ~25 us, so code runs in a few
// 4 MiB windows (NOP-filled, moved to new random addresses every few thousand cases): pc lies
// in a window's middle 2 MiB, so every literal (+-1 MiB) and every short branch lands in
// mapped memory; far targets are caught by an unmapped-fetch hook, whose address is compared.
#include <cstdint>
#include <map>
#include <optional>
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
  void place_windows();
  void write(uint64_t address, const void* data, size_t length);

  uc_struct* uc_ = nullptr;
  size_t fetch_hook_ = 0;
  std::mt19937_64 random_;
  std::vector<uint64_t> windows_;
  uint64_t cases_in_place_ = 0;
  // Bytes this case wrote over the NOP fill (restored afterwards).
  std::map<uint64_t, uint8_t> overlay_;

 public:
  std::optional<uint64_t> unmapped_fetch;  // set by the fetch hook
};

}  // namespace xprobe::test
