// Replays the fuzzer's seed corpus (and a few hostile inputs) through the fuzzer's own body,
// so every build checks what the libFuzzer target checks, without clang.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "parse_one_input.h"

namespace {

void replay(const std::string& input) {
  xprobe::fuzz::parse_one_input(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(FuzzCorpusReplay, EverySeedRunsClean) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(XPROBE_FUZZ_CORPUS_DIR)) {
    std::ifstream file(entry.path(), std::ios::binary);
    const std::string input((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    replay(input);
    ++count;
  }
  EXPECT_GE(count, 10u);
}

TEST(FuzzCorpusReplay, HostileInputs) {
  replay(std::string("p foo \0 %ax", 11));
  replay(std::string(5000, '+'));
  replay("p foo " + std::string(3000, '(') + std::string(3000, ')'));
  std::string deep = "%sp";
  for (int i = 0; i < 255; ++i) deep = "-0x8(" + deep + ")";
  replay("p foo " + deep + ":string[64]");
  replay("p foo +0(%sp):string[64] +0(%sp):u64[64] +0(%sp):b64@0/64[64]");
  replay("p foo \\18446744073709551615 \\-9223372036854775808 @0xffffffffffffffff:u64");
  replay("r99999999999999999999 foo");
  replay("p:" + std::string(1000, 'a') + "/" + std::string(1000, 'b') + " x");
}

}  // namespace
