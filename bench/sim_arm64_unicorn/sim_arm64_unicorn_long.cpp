// The long differential run of the A64 simulator against Unicorn 2 (millions of cases):
//   sim_arm64_unicorn_long [cases-per-class] [seed]
// Prints the case count per class and every mismatch found (up to 20); exit status 1 on any.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "unicorn_oracle.h"

int main(int argc, char** argv) {
  using xprobe::test::GeneratedClass;
  const uint64_t per_class = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 0xa64'10'6;
  xprobe::test::DifferentialStats stats;
  const auto start = std::chrono::steady_clock::now();
  // A fresh Unicorn every chunk: Unicorn 2.0.1 crashes in tb_set_jmp_target after some
  // hundred thousand cases in one engine (its translation cache, not the simulator).
  constexpr uint64_t kChunk = 2000;
  for (uint64_t done = 0, chunk = 0; done < per_class; done += kChunk, ++chunk) {
    xprobe::test::UnicornOracle oracle(seed + chunk);
    const uint64_t count = per_class - done < kChunk ? per_class - done : kChunk;
    for (int c = 0; c < static_cast<int>(GeneratedClass::Count); ++c)
      oracle.run(static_cast<GeneratedClass>(c), count, stats);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& [name, count] : stats.per_class)
    std::printf("  %-16s %llu\n", name.c_str(), static_cast<unsigned long long>(count));
  for (const auto& m : stats.first_mismatches) std::printf("MISMATCH %s\n", m.c_str());
  std::printf("seed %#llx: %llu cases, %llu mismatches, %.1f s\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(stats.cases), static_cast<unsigned long long>(stats.mismatches),
              seconds);
  return stats.mismatches == 0 ? 0 : 1;
}
