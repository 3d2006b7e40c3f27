// Replays a generated corpus of malformed ELF files through the ELF reader's fuzz body
// (fuzz/elf_reader/open_one_elf), so that builds without clang/libFuzzer cover it too.
// Under ASan/UBSan a bad read is a crash here; the body itself aborts on broken invariants.
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "elf_mutations.h"
#include "open_one_elf.h"
#include "test_support.h"

namespace xprobe::torture {
namespace {

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Small real objects of every class the reader meets: our PIE programs (with .symtab and
// DWARF), a stripped x86-64 and i386 shared library, an arm64 relocatable and shared object.
std::vector<std::string> seed_files() {
  std::vector<std::string> seeds{xprobe::testing::e2e_program("counter"), xprobe::testing::e2e_program("threads")};
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/libdl.so.2", "/usr/lib32/libdl.so.2",
                           "/usr/aarch64-linux-gnu/lib/crt1.o", "/usr/aarch64-linux-gnu/lib/libdl.so.2"}) {
    struct stat st{};
    if (stat(path, &st) == 0) seeds.emplace_back(path);
  }
  return seeds;
}

TEST(ElfCorpusReplay, UnmodifiedSeedsOpenWithSymbols) {
  for (const std::string& seed : seed_files()) {
    const auto bytes = read_bytes(seed);
    ASSERT_FALSE(bytes.empty()) << seed;
    const auto outcome = fuzz::open_one_elf(bytes.data(), bytes.size());
    EXPECT_TRUE(outcome.opened) << seed << ": " << outcome.error;
    EXPECT_GT(outcome.symbols, 0u) << seed;
  }
}

TEST(ElfCorpusReplay, TruncatedHeadersAreClearErrors) {
  const auto bytes = read_bytes(xprobe::testing::e2e_program("counter"));
  ASSERT_GE(bytes.size(), 64u);
  for (size_t cut = 0; cut < 64; ++cut) {
    const auto outcome = fuzz::open_one_elf(bytes.data(), cut);
    ASSERT_FALSE(outcome.opened) << "a " << cut << "-byte prefix of an ELF file was accepted";
    EXPECT_TRUE(outcome.error.find("not an ELF file") != std::string::npos ||
                outcome.error.find("not a valid ELF file") != std::string::npos ||
                outcome.error.find("bad ELF header") != std::string::npos)
        << cut << ": " << outcome.error;
  }
}

TEST(ElfCorpusReplay, MutatedFilesGiveAValueOrAOneLineErrorNeverACrash) {
  // XPROBE_ELF_CORPUS_OUT=DIR writes the corpus out (a seed corpus for fuzz_elf_reader).
  const char* corpus_out = std::getenv("XPROBE_ELF_CORPUS_OUT");
  size_t total = 0, opened = 0;
  uint32_t seed = 1;
  for (const std::string& file : seed_files()) {
    const auto original = read_bytes(file);
    ASSERT_FALSE(original.empty()) << file;
    const auto corpus = mutate_elf(original, seed++, 300);
    EXPECT_GT(corpus.size(), 300u) << file;
    for (const MutatedElf& mutated : corpus) {
      SCOPED_TRACE(file + ": " + mutated.how);
      const auto outcome = fuzz::open_one_elf(mutated.bytes.data(), mutated.bytes.size());
      ++total;
      if (outcome.opened) {
        ++opened;
      } else {
        EXPECT_NE(outcome.error.find("/proc/self/fd/"), std::string::npos) << "the error names the file: " << outcome.error;
      }
      if (corpus_out != nullptr) {
        std::ofstream out(fmt::format("{}/elf_{:06}", corpus_out, total), std::ios::binary);
        out.write(reinterpret_cast<const char*>(mutated.bytes.data()), static_cast<std::streamsize>(mutated.bytes.size()));
      }
    }
  }
  // Both outcomes must occur, or the corpus is not testing the reader's parsing at all.
  EXPECT_GT(opened, 0u);
  EXPECT_LT(opened, total);
  RecordProperty("mutated_files", static_cast<int>(total));
  std::printf("replayed %zu mutated ELF files, %zu opened, %zu refused\n", total, opened, total - opened);
}

}  // namespace
}  // namespace xprobe::torture
