// Boundary agreement with objdump (binutils 2.40) over whole binaries: every instruction start
// and length of a linear sweep must match objdump's, apart from the classes where objdump's
// listing is not what the processor executes (objdump_agreement.cpp lists them).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "objdump_agreement.h"

namespace xprobe::test {
namespace {

using insn::x86::Mode;

struct Target {
  std::string path;
  Mode mode;
};

void PrintTo(const Target& target, std::ostream* os) { *os << target.path; }

class ObjdumpAgreement : public ::testing::TestWithParam<Target> {};

TEST_P(ObjdumpAgreement, SameInstructionStartsAndLengths) {
  const Target& target = GetParam();
  if (!std::filesystem::exists(target.path)) GTEST_SKIP() << target.path << " is not installed";
  insn::x86::DecoderConfig config;
  config.mode = target.mode;
  // objdump's default for 66-prefixed near branches is AMD's; pin both sides to it.
  config.vendor = insn::x86::Vendor::Amd;
  const auto sections = run_objdump(target.path, target.mode == Mode::Long64 ? "-M amd64" : "-M i386");
  ASSERT_FALSE(sections.empty()) << "objdump found no executable section in " << target.path;
  SweepStats total;
  for (const auto& section : sections) total.add(compare_with_objdump(section, config));
  std::string quirks;
  for (const auto& [name, count] : total.objdump_quirks) quirks += " " + name + "=" + std::to_string(count);
  std::printf("objdump agreement %s: %zu instructions compared, %zu mismatches, %zu (bad) agreed;%s\n",
              target.path.c_str(), total.compared, total.mismatches, total.both_bad, quirks.c_str());
  RecordProperty("compared", static_cast<int>(total.compared));
  RecordProperty("mismatches", static_cast<int>(total.mismatches));
  std::string examples;
  for (const auto& e : total.examples) examples += e + "\n";
  EXPECT_GT(total.compared, 100u);
  EXPECT_EQ(total.mismatches, 0u) << examples;
}

std::vector<Target> targets() {
  std::vector<Target> list = {
      {"/lib/x86_64-linux-gnu/libc.so.6", Mode::Long64},
      {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", Mode::Long64},
      {"/lib/x86_64-linux-gnu/libm.so.6", Mode::Long64},
      {"/lib64/ld-linux-x86-64.so.2", Mode::Long64},
      {"/usr/bin/gdb", Mode::Long64},
      {"/usr/bin/python3.11", Mode::Long64},
      // Hand-written SIMD assembly (AVX2/AVX-512, present when some package pulled them in).
      {"/usr/lib/x86_64-linux-gnu/libx264.so.164", Mode::Long64},
      {"/usr/lib/x86_64-linux-gnu/libgcrypt.so.20", Mode::Long64},
      // OpenSSL: AES-NI/SHA/VAES/AVX-512 assembly, and data tables inside .text.
      {"/usr/lib/x86_64-linux-gnu/libcrypto.so.3", Mode::Long64},
      {"/lib32/libc.so.6", Mode::Protected32},
      {"/lib32/libm.so.6", Mode::Protected32},
  };
  // More 64-bit binaries to check ad hoc: XPROBE_X86_EXTRA_BINARIES=/path/a:/path/b.
  if (const char* extra = std::getenv("XPROBE_X86_EXTRA_BINARIES")) {
    std::string paths = extra;
    size_t from = 0;
    while (from < paths.size()) {
      const size_t to = paths.find(':', from);
      list.push_back({paths.substr(from, to - from), Mode::Long64});
      if (to == std::string::npos) break;
      from = to + 1;
    }
  }
  // 32-bit objects built for this test by CMake (gcc -m32 with several code-generation flags).
  const std::string objects = XPROBE_X86_TEST_OBJECTS32;
  size_t start = 0;
  while (start < objects.size()) {
    const size_t end = objects.find(',', start);
    list.push_back({objects.substr(start, end - start), Mode::Protected32});
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return list;
}

INSTANTIATE_TEST_SUITE_P(Binaries, ObjdumpAgreement, ::testing::ValuesIn(targets()),
                         [](const ::testing::TestParamInfo<Target>& param_info) {
                           std::string name = std::filesystem::path(param_info.param.path).filename().string();
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name + "_" + std::to_string(param_info.index);
                         });

}  // namespace
}  // namespace xprobe::test
