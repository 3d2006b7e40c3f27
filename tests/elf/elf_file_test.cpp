#include "elf/elf_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

using xprobe::elf::ElfFile;
using xprobe::elf::SymbolKind;

namespace {

// nm is the independent oracle for symbol addresses.
std::map<std::string, uint64_t> nm_symbols(const std::string& path) {
  std::map<std::string, uint64_t> out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("nm " + path).c_str(), "r"), pclose);
  char line[4096];
  while (pipe && fgets(line, sizeof line, pipe.get())) {
    unsigned long long address = 0;
    char type = 0;
    char name[4000];
    if (sscanf(line, "%llx %c %3999s", &address, &type, name) == 3) out[name] = address;
  }
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string write_temp(const std::vector<uint8_t>& bytes, const std::string& name) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace

TEST(ElfFile, ReadsArchitectureAndPie) {
  auto file = ElfFile::open(FIXTURE_PATH);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->arch(), xprobe::insn::Arch::X86_64);
  EXPECT_TRUE(file->position_independent());  // Debian's gcc builds PIE by default
  bool has_text = false;
  for (const auto& s : file->sections()) has_text |= s.name == ".text" && s.executable;
  EXPECT_TRUE(has_text);
}

TEST(ElfFile, SymbolAddressesAgreeWithNm) {
  auto file = ElfFile::open(FIXTURE_PATH);
  ASSERT_TRUE(file.ok());
  const auto nm = nm_symbols(FIXTURE_PATH);
  for (const char* name : {"fixture_add", "fixture_sub", "fixture_global_counter", "main"}) {
    auto matches = file->find_symbols(name);
    ASSERT_EQ(matches.size(), 1u) << name;
    ASSERT_TRUE(nm.count(name)) << name;
    EXPECT_EQ(matches[0]->address, nm.at(name)) << name;
  }
  EXPECT_EQ(file->find_symbols("fixture_global_counter")[0]->kind, SymbolKind::Object);
  EXPECT_EQ(file->find_symbols("fixture_add")[0]->kind, SymbolKind::Function);
}

TEST(ElfFile, FindsCxxFunctionsByDemangledName) {
  auto file = ElfFile::open(FIXTURE_PATH);
  ASSERT_TRUE(file.ok());
  auto by_full = file->find_symbols("fixture::scale(int, int)");
  auto by_short = file->find_symbols("fixture::scale");
  auto by_mangled = file->find_symbols("_ZN7fixture5scaleEii");
  ASSERT_EQ(by_full.size(), 1u);
  ASSERT_EQ(by_short.size(), 1u);
  ASSERT_EQ(by_mangled.size(), 1u);
  EXPECT_EQ(by_full[0], by_mangled[0]);
  EXPECT_EQ(by_short[0], by_mangled[0]);
  EXPECT_EQ(file->find_symbols("fixture::Counter::bump").size(), 1u);
}

TEST(ElfFile, GlobMatchesSeveral) {
  auto file = ElfFile::open(FIXTURE_PATH);
  ASSERT_TRUE(file.ok());
  auto matches = file->find_symbols("fixture_[as]*");
  std::vector<std::string> names;
  for (auto* s : matches)
    if (s->kind == SymbolKind::Function) names.push_back(s->name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fixture_add", "fixture_sub"}));
}

TEST(ElfFile, FunctionBytesMatchTheFile) {
  auto file = ElfFile::open(FIXTURE_PATH);
  ASSERT_TRUE(file.ok());
  const auto* add = file->find_symbols("fixture_add")[0];
  auto bytes = file->bytes_at(add->address, add->size);
  ASSERT_TRUE(bytes.has_value());
  auto offset = file->address_to_file_offset(add->address);
  ASSERT_TRUE(offset.has_value());
  const auto raw = read_file(FIXTURE_PATH);
  ASSERT_LE(*offset + add->size, raw.size());
  EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), raw.begin() + static_cast<long>(*offset)));
  EXPECT_EQ(file->file_offset_to_address(*offset), add->address);
  EXPECT_EQ(file->function_containing(add->address + 1), add);
  // Symbols starting in a range: the function itself from its own address, nothing inside it.
  const auto from_start = file->symbols_starting_in(add->address, add->address + 1);
  ASSERT_FALSE(from_start.empty());
  EXPECT_EQ(from_start.front()->address, add->address);
  EXPECT_TRUE(file->symbols_starting_in(add->address + 1, add->address + add->size).empty());
  // Every function's start is found by a range that begins at it.
  for (const auto& symbol : file->symbols()) {
    if (symbol.kind != xprobe::elf::SymbolKind::Function) continue;
    const auto found = file->symbols_starting_in(symbol.address, symbol.address + 1);
    EXPECT_TRUE(std::any_of(found.begin(), found.end(), [&](const xprobe::elf::Symbol* s) { return s == &symbol; })) << symbol.name;
  }
}

TEST(ElfFile, RejectsMissingAndNonElfFiles) {
  auto missing = ElfFile::open("/nonexistent/xprobe-test");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos);
  auto text = ElfFile::open(write_temp({'h', 'e', 'l', 'l', 'o'}, "not-elf"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("not an ELF file"), std::string::npos);
}

// Malformed input must give an error or a consistent partial view, never a crash (ASan checks).
TEST(ElfFile, SurvivesTruncationAndCorruption) {
  const auto raw = read_file(FIXTURE_PATH);
  ASSERT_GT(raw.size(), 4096u);
  for (size_t cut : {4ul, 16ul, 52ul, 64ul, 200ul, 1000ul, raw.size() / 2, raw.size() - 1}) {
    std::vector<uint8_t> truncated(raw.begin(), raw.begin() + static_cast<long>(cut));
    auto file = ElfFile::open(write_temp(truncated, "truncated"));
    if (file.ok())
      for (const auto& section : file->sections()) (void)file->section_bytes(section);
  }
  uint32_t state = 12345;
  for (int round = 0; round < 200; ++round) {
    auto corrupt = raw;
    for (int flips = 0; flips < 8; ++flips) {
      state = state * 1103515245u + 12345u;
      // Corrupt the headers, where offsets and sizes live.
      corrupt[(state >> 8) % 4096] = static_cast<uint8_t>(state >> 24);
    }
    auto file = ElfFile::open(write_temp(corrupt, "corrupt"));
    if (!file.ok()) continue;
    for (const auto& section : file->sections()) {
      auto bytes = file->section_bytes(section);
      volatile uint8_t sink = 0;
      if (!bytes.empty()) sink = static_cast<uint8_t>(sink + bytes.back());
    }
    (void)file->find_symbols("main");
  }
}
