// The simulator against Unicorn executing the same instruction: thousands of random cases of
// every simulated class (the long run is bench/sim_arm64_unicorn).
#include <gtest/gtest.h>

#include "unicorn_oracle.h"

namespace xprobe::test {
namespace {

constexpr uint64_t kCasesPerClass = 1500;

TEST(Arm64SimulatorVsUnicorn, EveryClassAgrees) {
  UnicornOracle oracle(0x5eed'a64);
  DifferentialStats stats;
  for (int c = 0; c < static_cast<int>(GeneratedClass::Count); ++c)
    oracle.run(static_cast<GeneratedClass>(c), kCasesPerClass, stats);
  for (const auto& m : stats.first_mismatches) ADD_FAILURE() << m;
  std::printf("%llu cases, %llu mismatches\n", static_cast<unsigned long long>(stats.cases),
              static_cast<unsigned long long>(stats.mismatches));
  EXPECT_EQ(stats.cases, kCasesPerClass * static_cast<uint64_t>(GeneratedClass::Count));
  EXPECT_EQ(stats.mismatches, 0u);
}

}  // namespace
}  // namespace xprobe::test
