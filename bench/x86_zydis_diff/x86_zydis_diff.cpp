// The long differential run against Zydis 4: the in-suite test's comparison for millions
// of cases, e.g.  x86_zydis_diff --cases 5000000 --seed 1 --mode both
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

#include "x86_diff/differential_run.h"

int main(int argc, char** argv) {
  using xprobe::insn::x86::Mode;
  CLI::App app{"Differential run of xprobe's x86 decoder against Zydis 4 (validity and length)"};
  uint64_t cases = 1000000;
  uint64_t seed = 1;
  std::string mode_name = "both";
  size_t class_limit = 60;
  bool detailed = false;
  app.add_option("--cases", cases, "cases per mode");
  app.add_option("--seed", seed, "random seed");
  app.add_option("--mode", mode_name, "64, 32 or both")->check(CLI::IsMember({"64", "32", "both"}));
  app.add_option("--classes", class_limit, "how many disagreement classes to list");
  app.add_flag("--detailed", detailed, "classes by ModRM reg/mod and VEX.L/W too");
  CLI11_PARSE(app, argc, argv);

  uint64_t unexpected = 0;
  for (Mode mode : {Mode::Long64, Mode::Protected32}) {
    const bool wanted = mode_name == "both" || (mode == Mode::Long64) == (mode_name == "64");
    if (!wanted) continue;
    auto pool = xprobe::test::x86::load_libc_instructions(mode);
    if (!pool) {
      std::fprintf(stderr, "%s\n", pool.error().message.c_str());
      return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    xprobe::test::x86::RunSummary summary;
    summary.unexpected.set_coarse(!detailed);
    xprobe::test::x86::run_differential(*pool, mode, seed, cases, summary);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("== %s mode, seed %llu, %zu real instructions seeding the mutations, %.1f s\n%s\n",
                mode == Mode::Long64 ? "64-bit" : "32-bit", static_cast<unsigned long long>(seed),
                pool->instructions.size(), seconds, summary.report(class_limit).c_str());
    unexpected += summary.unexpected.total();
  }
  return unexpected == 0 ? 0 : 1;
}
