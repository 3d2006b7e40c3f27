#include "elf/exception_tables.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using xprobe::elf::ElfFile;
using xprobe::elf::ExceptionTables;
using xprobe::elf::FrameDescription;
using xprobe::elf::parse_eh_frame;
using xprobe::elf::parse_lsda_landing_pads;

namespace {

constexpr const char* kLibstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  char buffer[65536];
  size_t n = 0;
  while (pipe && (n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) out.append(buffer, n);
  return out;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string write_temp(const std::vector<uint8_t>& bytes, const std::string& name) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
  return path;
}

// eh_fixture.cpp compiled to assembly, then assembled with -L (and linked with
// --discard-none) so that gcc's local labels (.LFB*, .LCOLDB*, the landing pads .L*) stay in
// the symbol table: the assembly's call-site tables and nm's label addresses are an oracle
// independent of the parser.
struct Toolchain {
  const char* arch;
  const char* cxx;
  const char* cc;
  const char* nm;
  const char* objdump;
};
constexpr Toolchain kX86_64{"x86_64", "g++", "gcc", "nm", "objdump"};
constexpr Toolchain kAArch64{"aarch64", "aarch64-linux-gnu-g++-12", "aarch64-linux-gnu-gcc-12",
                             "aarch64-linux-gnu-nm", "aarch64-linux-gnu-objdump"};

struct Variant {
  const Toolchain* tools;
  const char* optimization;
  std::string name() const { return std::string(tools->arch) + optimization; }
};
const Variant kVariants[] = {{&kX86_64, "-O0"}, {&kX86_64, "-O2"}, {&kAArch64, "-O2"}};
constexpr Variant kDefault{&kX86_64, "-O2"};

struct Fixture {
  std::string binary;
  std::string assembly;
  const Toolchain* tools = nullptr;
};

const Fixture& fixture(const Variant& variant = kDefault) {
  static std::map<std::string, Fixture> built;
  auto it = built.find(variant.name());
  if (it != built.end()) return it->second;
  // The pid keeps test processes that ctest runs in parallel out of each other's files.
  const std::string base = ::testing::TempDir() + "/eh_fixture" + std::to_string(getpid()) + variant.name();
  Fixture f{base, base + ".s", variant.tools};
  const std::string opt = variant.optimization;
  const std::string command = std::string(variant.tools->cxx) + " " + opt + " -S " EH_FIXTURE_SOURCE " -o " +
                              f.assembly + " && " + variant.tools->cc + " " + opt + " -c " EH_FIXTURE_C_SOURCE
                              " -o " + base + "_c.o && " + variant.tools->cxx + " -Wa,-L -Wl,--discard-none " +
                              f.assembly + " " + base + "_c.o -o " + f.binary;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return built.emplace(variant.name(), f).first->second;
}

std::map<std::string, uint64_t> nm_addresses(const Fixture& f) {
  std::map<std::string, uint64_t> out;
  std::istringstream lines(run(std::string(f.tools->nm) + " " + f.binary));
  std::string line;
  while (std::getline(lines, line)) {
    unsigned long long address = 0;
    char type = 0;
    char name[4096];
    if (sscanf(line.c_str(), "%llx %c %4095s", &address, &type, name) == 3) out[name] = address;
  }
  return out;
}

std::string trimmed(const std::string& line) {
  const size_t begin = line.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  return line.substr(begin, line.find_last_not_of(" \t\r") - begin + 1);
}

// Call-site tables of the assembly: for each region start label (the "-.LFB7" of
// ".uleb128 .LEHB0-.LFB7"), the labels of its landing pads. gcc writes each entry as four
// .uleb128 lines: start, length, landing pad (0 = none), action.
std::map<std::string, std::set<std::string>> landing_pad_labels(const std::string& assembly_path) {
  std::map<std::string, std::set<std::string>> by_region;
  std::ifstream in(assembly_path);
  std::string line;
  bool in_table = false;
  std::vector<std::string> fields;
  while (std::getline(in, line)) {
    const std::string text = trimmed(line);
    if (text.rfind(".LLSDACSB", 0) == 0 && text.back() == ':') {
      in_table = true;
      fields.clear();
    } else if (text.rfind(".LLSDACSE", 0) == 0 && text.back() == ':') {
      in_table = false;
      EXPECT_EQ(fields.size() % 4, 0u) << text;
      for (size_t i = 0; i + 3 < fields.size(); i += 4) {
        const std::string region = fields[i].substr(fields[i].find('-') + 1);
        auto& pads = by_region[region];
        if (fields[i + 2] == "0") continue;
        const size_t minus = fields[i + 2].find('-');
        EXPECT_EQ(fields[i + 2].substr(minus + 1), region);
        pads.insert(fields[i + 2].substr(0, minus));
      }
    } else if (in_table) {
      EXPECT_EQ(text.rfind(".uleb128 ", 0), 0u) << "unexpected call-site line: " << text;
      fields.push_back(trimmed(text.substr(9)));
    }
  }
  return by_region;
}

std::set<uint64_t> objdump_instruction_addresses(const Fixture& f) {
  std::set<uint64_t> out;
  std::istringstream lines(run(std::string(f.tools->objdump) + " -d --no-show-raw-insn " + f.binary));
  std::string line;
  while (std::getline(lines, line)) {
    unsigned long long address = 0;
    char colon = 0;
    if (line.size() > 2 && line[0] == ' ' && sscanf(line.c_str(), " %llx%c", &address, &colon) == 2 && colon == ':')
      out.insert(address);
  }
  return out;
}

// readelf's FDE lines ("... FDE cie=... pc=begin..end") and whether an "Augmentation data:"
// line follows (the LSDA pointer, for CIEs with 'L').
std::set<std::tuple<uint64_t, uint64_t, bool>> readelf_frames(const std::string& path) {
  std::set<std::tuple<uint64_t, uint64_t, bool>> out;
  std::istringstream lines(run("readelf --debug-dump=frames " + path));
  std::string line;
  bool in_fde = false;
  unsigned long long begin = 0, end = 0;
  bool has_lsda = false;
  auto flush = [&] {
    if (in_fde && begin != 0 && end > begin) out.emplace(begin, end, has_lsda);
    in_fde = false;
  };
  while (std::getline(lines, line)) {
    const size_t pc = line.find(" FDE cie=");
    if (pc != std::string::npos) {
      flush();
      in_fde = sscanf(line.c_str() + line.find("pc=", pc), "pc=%llx..%llx", &begin, &end) == 2;
      has_lsda = false;
    } else if (line.find(" CIE") != std::string::npos || line.find("ZERO terminator") != std::string::npos) {
      flush();
    } else if (in_fde && line.find("Augmentation data:") != std::string::npos) {
      has_lsda = true;
    }
  }
  flush();
  return out;
}

std::set<std::tuple<uint64_t, uint64_t, bool>> our_frames(const ExceptionTables& tables) {
  std::set<std::tuple<uint64_t, uint64_t, bool>> out;
  for (const FrameDescription& f : tables.frames()) out.emplace(f.pc_begin, f.pc_end, f.lsda.has_value());
  return out;
}

}  // namespace

TEST(ExceptionTables, LandingPadsAgreeWithTheCompilersCallSiteTables) {
  for (const Variant& variant : kVariants) {
    SCOPED_TRACE(variant.name());
    const Fixture& f = fixture(variant);
    auto file = ElfFile::open(f.binary);
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto tables = ExceptionTables::index(*file);
    ASSERT_TRUE(tables.ok()) << tables.error().message;
    const auto labels = nm_addresses(f);
    const auto regions = landing_pad_labels(f.assembly);
    ASSERT_GE(regions.size(), 5u);

    std::set<uint64_t> all_expected;
    for (const auto& [region, pad_labels] : regions) {
      SCOPED_TRACE(region);
      ASSERT_TRUE(labels.count(region));
      const uint64_t start = labels.at(region);
      const FrameDescription* frame = tables->frame_covering(start);
      ASSERT_NE(frame, nullptr);
      EXPECT_EQ(frame->pc_begin, start);  // LPStart omitted: the FDE's pc_begin
      EXPECT_TRUE(frame->lsda.has_value());
      std::vector<uint64_t> expected;
      for (const std::string& label : pad_labels) {
        ASSERT_TRUE(labels.count(label)) << label;
        expected.push_back(labels.at(label));
      }
      std::sort(expected.begin(), expected.end());
      all_expected.insert(expected.begin(), expected.end());
      auto pads = tables->landing_pads_covering(start);
      ASSERT_TRUE(pads.ok()) << pads.error().message;
      EXPECT_EQ(*pads, expected);
      auto one_shot = xprobe::elf::landing_pads_covering(*file, frame->pc_end - 1);
      ASSERT_TRUE(one_shot.ok());
      EXPECT_EQ(*one_shot, expected);
    }
    ASSERT_FALSE(all_expected.empty());
    // Nothing in the binary (crt files included) has a landing pad the assembly does not name.
    auto everywhere = tables->landing_pads_in(0, ~uint64_t{0});
    ASSERT_TRUE(everywhere.ok());
    EXPECT_EQ(std::set<uint64_t>(everywhere->begin(), everywhere->end()), all_expected);
  }
}

TEST(ExceptionTables, LandingPadsAreInstructionsInsideTheirFunction) {
  for (const Variant& variant : kVariants) {
    SCOPED_TRACE(variant.name());
    const Fixture& f = fixture(variant);
    auto file = ElfFile::open(f.binary);
    ASSERT_TRUE(file.ok());
    auto tables = ExceptionTables::index(*file);
    ASSERT_TRUE(tables.ok()) << tables.error().message;
    const auto instructions = objdump_instruction_addresses(f);
    ASSERT_GT(instructions.size(), 50u);
    size_t checked = 0;
    for (const FrameDescription& frame : tables->frames()) {
      for (uint64_t pad : frame.landing_pads) {
        EXPECT_GE(pad, frame.pc_begin);
        EXPECT_LT(pad, frame.pc_end);
        EXPECT_TRUE(instructions.count(pad)) << std::hex << pad << " is not an instruction boundary";
        const auto* function = file->function_containing(pad);
        ASSERT_NE(function, nullptr) << std::hex << pad;
        EXPECT_EQ(file->function_containing(frame.pc_begin), function);
        ++checked;
      }
    }
    EXPECT_GE(checked, 7u);
  }
}

TEST(ExceptionTables, CountsMatchWhatTheSourceForces) {
  for (const Variant& variant : kVariants) {
    SCOPED_TRACE(variant.name());
    auto file = ElfFile::open(fixture(variant).binary);
    ASSERT_TRUE(file.ok());
    auto tables = ExceptionTables::index(*file);
    ASSERT_TRUE(tables.ok()) << tables.error().message;
    // A function's pads, in its own FDE and, at -O2, in its .cold part's FDE.
    auto count = [&](const std::string& mangled) -> size_t {
      size_t total = 0;
      bool found = false;
      for (const auto& symbol : file->symbols()) {
        if (symbol.name != mangled && symbol.name != mangled + ".cold") continue;
        found = true;
        auto pads = tables->landing_pads_covering(symbol.address);
        EXPECT_TRUE(pads.ok());
        if (pads.ok()) total += pads->size();
      }
      EXPECT_TRUE(found) << mangled;
      return total;
    };
    EXPECT_EQ(count("_Z11one_cleanupi"), 1u);
    EXPECT_EQ(count("_Z14two_try_blocksi"), 2u);
    EXPECT_EQ(count("_Z14three_cleanupsi"), 3u);
    EXPECT_EQ(count("_Z15no_landing_padsi"), 0u);
    EXPECT_EQ(count("_ZN5GuardD2Ev"), 0u);
  }
}

TEST(ExceptionTables, CFunctionAndAddressesWithoutFdeHaveNoLandingPads) {
  auto file = ElfFile::open(fixture().binary);
  ASSERT_TRUE(file.ok());
  auto tables = ExceptionTables::index(*file);
  ASSERT_TRUE(tables.ok());
  const auto c_function = file->find_symbols("eh_fixture_c_function");
  ASSERT_EQ(c_function.size(), 1u);
  const FrameDescription* frame = tables->frame_covering(c_function[0]->address);
  ASSERT_NE(frame, nullptr);  // gcc gives C functions unwind information, but no LSDA
  EXPECT_FALSE(frame->lsda.has_value());
  auto pads = tables->landing_pads_covering(c_function[0]->address);
  ASSERT_TRUE(pads.ok());
  EXPECT_TRUE(pads->empty());
  auto none = tables->landing_pads_covering(0x10);  // below every section: no FDE
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(tables->frame_covering(0x10), nullptr);
}

TEST(ExceptionTables, FramesAgreeWithReadelf) {
  for (const std::string& path : {fixture().binary, std::string(kLibstdcxx)}) {
    SCOPED_TRACE(path);
    auto file = ElfFile::open(path);
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto tables = ExceptionTables::index(*file);
    ASSERT_TRUE(tables.ok()) << tables.error().message;
    const auto expected = readelf_frames(path);
    ASSERT_GT(expected.size(), 10u);
    EXPECT_EQ(our_frames(*tables), expected);
  }
}

TEST(ExceptionTables, LibstdcxxParsesOverEveryFde) {
  auto file = ElfFile::open(kLibstdcxx);
  ASSERT_TRUE(file.ok()) << file.error().message;
  const auto started = std::chrono::steady_clock::now();
  auto tables = ExceptionTables::index(*file);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  size_t with_lsda = 0, pads = 0;
  for (const FrameDescription& frame : tables->frames()) {
    EXPECT_FALSE(frame.lsda_error.has_value()) << *frame.lsda_error;
    with_lsda += frame.lsda.has_value();
    pads += frame.landing_pads.size();
    for (uint64_t pad : frame.landing_pads) {
      EXPECT_GE(pad, frame.pc_begin);
      EXPECT_LT(pad, frame.pc_end);
    }
  }
  EXPECT_GT(tables->frames().size(), 1000u);
  EXPECT_GT(with_lsda, 100u);
  EXPECT_GT(pads, with_lsda / 2);
  // One query in the middle of every FDE finds every landing pad once.
  const auto queries_started = std::chrono::steady_clock::now();
  size_t queried_pads = 0;
  for (const FrameDescription& frame : tables->frames()) {
    auto found = tables->landing_pads_covering(frame.pc_begin + (frame.pc_end - frame.pc_begin) / 2);
    ASSERT_TRUE(found.ok());
    queried_pads += found->size();
  }
  const auto query_time = std::chrono::steady_clock::now() - queries_started;
  EXPECT_EQ(queried_pads, pads);
  const auto microseconds = std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
  const auto query_nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(query_time).count() /
                                 static_cast<long long>(tables->frames().size());
  RecordProperty("index_microseconds", static_cast<int>(microseconds));
  std::printf("libstdc++: %zu FDEs, %zu with an LSDA, %zu landing pads, indexed in %lld us, %lld ns per query\n",
              tables->frames().size(), with_lsda, pads, static_cast<long long>(microseconds),
              static_cast<long long>(query_nanoseconds));
}

// --- The LSDA parser on bytes written by hand (LSB "LSDA" / gcc's layout).

TEST(ParseLsda, HandWrittenTable) {
  std::vector<uint8_t> lsda = {
      0xff,                    // LPStart omitted: the function start
      0xff,                    // no type table
      0x01,                    // call sites in uleb128
      0x08,                    // call-site table length
      0x00, 0x04, 0x10, 0x00,  // [0, 4): landing pad at +0x10, cleanup
      0x10, 0x04, 0x00, 0x00,  // [0x10, 0x14): no landing pad
  };
  auto pads = parse_lsda_landing_pads(lsda, 0x5000, 0x1000, 8);
  ASSERT_TRUE(pads.ok()) << pads.error().message;
  EXPECT_EQ(*pads, (std::vector<uint64_t>{0x1010}));

  lsda[3] = 0x09;  // one byte more than there is
  auto past_end = parse_lsda_landing_pads(lsda, 0x5000, 0x1000, 8);
  ASSERT_FALSE(past_end.ok());
  EXPECT_NE(past_end.error().message.find("LSDA at 0x5004: call-site table (9 bytes)"), std::string::npos)
      << past_end.error().message;

  lsda[3] = 0x07;  // the table ends inside the second entry
  auto cut = parse_lsda_landing_pads(lsda, 0x5000, 0x1000, 8);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("call-site action"), std::string::npos) << cut.error().message;
}

TEST(ParseLsda, ExplicitLpStartTypeTableAndFixedSizeCallSites) {
  std::vector<uint8_t> bytes = {
      0x03, 0x00, 0x20, 0x00, 0x00,  // LPStart udata4 = 0x2000
      0x9b, 26,                      // TType pcrel|sdata4|indirect; its table ends 26 bytes on
      0x03,                          // call sites in udata4 (clang's choice)
      26,                            // call-site table length: two entries of 4+4+4+1 bytes
  };
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  u32(0x0), u32(0x8), u32(0x40), bytes.push_back(1);
  u32(0x8), u32(0x8), u32(0x30), bytes.push_back(0);
  auto pads = parse_lsda_landing_pads(bytes, 0x7000, 0x1000, 8);
  ASSERT_TRUE(pads.ok()) << pads.error().message;
  EXPECT_EQ(*pads, (std::vector<uint64_t>{0x2030, 0x2040}));

  bytes[6] = 40;  // a type table ending past the section
  auto past_end = parse_lsda_landing_pads(bytes, 0x7000, 0x1000, 8);
  ASSERT_FALSE(past_end.ok());
  EXPECT_NE(past_end.error().message.find("type table"), std::string::npos) << past_end.error().message;
}

TEST(ParseLsda, RefusesWhatItCannotResolve) {
  // LPStart text-relative: its base is the loader's.
  auto textrel = parse_lsda_landing_pads(std::vector<uint8_t>{0x23, 0x10, 0, 0, 0, 0xff, 0x01, 0x00}, 0x5000,
                                         0x1000, 8);
  ASSERT_FALSE(textrel.ok());
  EXPECT_NE(textrel.error().message.find("LPStart"), std::string::npos) << textrel.error().message;
  // Call-site fields pc-relative: not offsets.
  auto pcrel = parse_lsda_landing_pads(std::vector<uint8_t>{0xff, 0xff, 0x1b, 0x00}, 0x5000, 0x1000, 8);
  ASSERT_FALSE(pcrel.ok());
  EXPECT_NE(pcrel.error().message.find("call-site encoding 0x1b"), std::string::npos) << pcrel.error().message;
  // A LEB128 that never ends.
  auto leb = parse_lsda_landing_pads(std::vector<uint8_t>{0xff, 0xff, 0x01, 0x80, 0x80}, 0x5000, 0x1000, 8);
  ASSERT_FALSE(leb.ok());
  EXPECT_NE(leb.error().message.find("call-site table length"), std::string::npos) << leb.error().message;
  // Empty input.
  EXPECT_FALSE(parse_lsda_landing_pads({}, 0x5000, 0x1000, 8).ok());
  // An unknown value format.
  EXPECT_FALSE(parse_lsda_landing_pads(std::vector<uint8_t>{0x07, 0, 0}, 0x5000, 0x1000, 8).ok());
}

TEST(ParseLsda, RealTablesTruncatedOrMutatedNeverCrash) {
  auto file = ElfFile::open(fixture().binary);
  ASSERT_TRUE(file.ok());
  auto tables = ExceptionTables::index(*file);
  ASSERT_TRUE(tables.ok());
  const auto two = file->find_symbols("two_try_blocks");
  ASSERT_EQ(two.size(), 1u);
  const FrameDescription* frame = tables->frame_covering(two[0]->address);
  ASSERT_TRUE(frame != nullptr && frame->lsda && frame->landing_pads.size() == 2);
  // The LSDA to the end of its section (the parser is given no more in ExceptionTables).
  std::optional<std::span<const uint8_t>> lsda;
  for (const auto& section : file->sections())
    if (section.name == ".gcc_except_table" && *frame->lsda >= section.address &&
        *frame->lsda < section.address + section.size)
      lsda = file->section_bytes(section).subspan(*frame->lsda - section.address);
  ASSERT_TRUE(lsda.has_value());
  if (lsda->size() > 64) lsda = lsda->first(64);
  auto whole = parse_lsda_landing_pads(*lsda, *frame->lsda, frame->pc_begin, 8);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(*whole, frame->landing_pads);
  size_t errors = 0;
  for (size_t n = 0; n < lsda->size(); ++n) {
    auto prefix = parse_lsda_landing_pads(lsda->first(n), *frame->lsda, frame->pc_begin, 8);
    if (prefix.ok())
      EXPECT_EQ(*prefix, frame->landing_pads) << n;  // a prefix can only succeed if it holds the whole table
    else
      ++errors;
  }
  EXPECT_GE(errors, 5u);
  std::vector<uint8_t> mutated(lsda->begin(), lsda->end());
  for (size_t i = 0; i < mutated.size(); ++i) {
    const uint8_t original = mutated[i];
    for (int value = 0; value < 256; ++value) {
      mutated[i] = static_cast<uint8_t>(value);
      (void)parse_lsda_landing_pads(mutated, *frame->lsda, frame->pc_begin, 8);
    }
    mutated[i] = original;
  }
}

// --- .eh_frame corrupted inside a copy of the fixture.

namespace {

struct FixtureImage {
  std::vector<uint8_t> bytes;
  uint64_t eh_frame_offset = 0;
  uint64_t eh_frame_size = 0;
  uint64_t lsda_offset = 0;  // two_try_blocks' LSDA
};

FixtureImage fixture_image() {
  FixtureImage image;
  const std::string path = fixture().binary;
  auto file = ElfFile::open(path);
  EXPECT_TRUE(file.ok());
  if (!file.ok()) return image;
  image.bytes = read_bytes(path);
  for (const auto& section : file->sections())
    if (section.name == ".eh_frame") image.eh_frame_offset = section.file_offset, image.eh_frame_size = section.size;
  auto tables = ExceptionTables::index(*file);
  EXPECT_TRUE(tables.ok());
  const auto two = file->find_symbols("two_try_blocks");
  EXPECT_EQ(two.size(), 1u);
  if (tables.ok() && two.size() == 1) {
    const FrameDescription* frame = tables->frame_covering(two[0]->address);
    if (frame && frame->lsda) image.lsda_offset = *file->address_to_file_offset(*frame->lsda);
  }
  return image;
}

}  // namespace

TEST(ExceptionTables, CorruptCieIsAnErrorNamingTheOffset) {
  FixtureImage image = fixture_image();
  ASSERT_NE(image.eh_frame_offset, 0u);
  // The first record is a CIE: length(4) id(4) version(1) augmentation "zR".
  uint8_t* cie = image.bytes.data() + image.eh_frame_offset;
  ASSERT_EQ(cie[4] | cie[5] | cie[6] | cie[7], 0);
  ASSERT_EQ(cie[9], 'z');
  cie[10] = 'Q';
  auto file = ElfFile::open(write_temp(image.bytes, "eh_bad_cie"));
  ASSERT_TRUE(file.ok());
  auto tables = ExceptionTables::index(*file);
  ASSERT_FALSE(tables.ok());
  EXPECT_NE(tables.error().message.find("unknown character 'Q'"), std::string::npos) << tables.error().message;
  EXPECT_NE(tables.error().message.find(".eh_frame at 0x"), std::string::npos);

  cie[10] = 'R';
  cie[0] = 0xf0, cie[1] = 0xff, cie[2] = 0xff, cie[3] = 0x0f;  // a length past the section
  auto long_file = ElfFile::open(write_temp(image.bytes, "eh_long_cie"));
  ASSERT_TRUE(long_file.ok());
  auto long_tables = ExceptionTables::index(*long_file);
  ASSERT_FALSE(long_tables.ok());
  EXPECT_NE(long_tables.error().message.find("runs past the end"), std::string::npos);
}

TEST(ExceptionTables, CorruptLsdaIsAnErrorForItsFunctionOnly) {
  FixtureImage image = fixture_image();
  ASSERT_NE(image.lsda_offset, 0u);
  image.bytes[image.lsda_offset] = 0x20 | 0x03;  // LPStart textrel udata4
  auto file = ElfFile::open(write_temp(image.bytes, "eh_bad_lsda"));
  ASSERT_TRUE(file.ok());
  auto tables = ExceptionTables::index(*file);
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  auto bad = tables->landing_pads_covering(file->find_symbols("two_try_blocks").at(0)->address);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("LPStart"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find(".gcc_except_table"), std::string::npos) << bad.error().message;
  auto good = tables->landing_pads_covering(file->find_symbols("three_cleanups").at(0)->address);
  ASSERT_TRUE(good.ok()) << good.error().message;
}

TEST(ExceptionTables, EveryByteOfEhFrameMutatedNeverCrashes) {
  FixtureImage image = fixture_image();
  ASSERT_NE(image.eh_frame_size, 0u);
  // parse_eh_frame on the section's bytes: the whole file need not be rewritten per mutation.
  std::vector<uint8_t> section(image.bytes.begin() + static_cast<long>(image.eh_frame_offset),
                               image.bytes.begin() + static_cast<long>(image.eh_frame_offset + image.eh_frame_size));
  auto original = parse_eh_frame(section, 0x2000, 8);
  ASSERT_TRUE(original.ok()) << original.error().message;
  size_t failures = 0;
  for (size_t i = 0; i < section.size(); ++i) {
    const uint8_t keep = section[i];
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x7f}, static_cast<uint8_t>(keep ^ 0x80)}) {
      section[i] = value;
      failures += !parse_eh_frame(section, 0x2000, 8).ok();
    }
    section[i] = keep;
  }
  EXPECT_GT(failures, 0u);
}

// --- .eh_frame written by hand: formats gcc does not emit for x86-64.

namespace {

void put(std::vector<uint8_t>& out, uint64_t value, int size) {
  for (int i = 0; i < size; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

}  // namespace

TEST(ParseEhFrame, SixtyFourBitLengthsVersion3AndTerminator) {
  std::vector<uint8_t> s;
  // CIE, 64-bit format: 0xffffffff, 8-byte length, 8-byte id 0.
  const size_t cie_start = s.size();
  put(s, 0xffffffff, 4);
  const size_t cie_length_at = s.size();
  put(s, 0, 8);
  const size_t cie_body = s.size();
  put(s, 0, 8);                      // CIE id
  s.push_back(3);                    // version 3: return register is a uleb128
  for (char c : std::string("zPLRS")) s.push_back(static_cast<uint8_t>(c));
  s.push_back(0);
  s.push_back(1);                    // code alignment
  s.push_back(0x78);                 // data alignment -8
  s.push_back(16);                   // return address register
  s.push_back(1 + 1 + 4 + 1 + 1);    // augmentation data length
  s.push_back(0x9b), put(s, 0x1234, 4);  // personality pcrel|sdata4|indirect (skipped)
  s.push_back(0x1b);                 // LSDA pcrel|sdata4
  s.push_back(0x04);                 // FDE pointers udata8 absolute
  while ((s.size() - cie_body) % 8) s.push_back(0);  // DW_CFA_nop padding
  const uint64_t cie_length = s.size() - cie_body;
  for (int i = 0; i < 8; ++i) s[cie_length_at + i] = static_cast<uint8_t>(cie_length >> (8 * i));

  // FDE, 64-bit format.
  put(s, 0xffffffff, 4);
  const size_t fde_length_at = s.size();
  put(s, 0, 8);
  const size_t fde_body = s.size();
  put(s, fde_body - cie_start, 8);   // CIE pointer back to the CIE
  put(s, 0x401000, 8);               // pc_begin
  put(s, 0x80, 8);                   // pc_range
  s.push_back(4);                    // augmentation data length
  const size_t lsda_field = s.size();
  put(s, 0x100, 4);                  // LSDA = field address + 0x100
  while ((s.size() - fde_body) % 8) s.push_back(0);
  const uint64_t fde_length = s.size() - fde_body;
  for (int i = 0; i < 8; ++i) s[fde_length_at + i] = static_cast<uint8_t>(fde_length >> (8 * i));
  put(s, 0, 4);                      // terminator
  put(s, 0xdeadbeef, 4);             // ignored after the terminator

  const uint64_t section_address = 0x600000;
  auto frames = parse_eh_frame(s, section_address, 8);
  ASSERT_TRUE(frames.ok()) << frames.error().message;
  ASSERT_EQ(frames->size(), 1u);
  EXPECT_EQ((*frames)[0].pc_begin, 0x401000u);
  EXPECT_EQ((*frames)[0].pc_end, 0x401080u);
  ASSERT_TRUE((*frames)[0].lsda.has_value());
  EXPECT_EQ(*(*frames)[0].lsda, section_address + lsda_field + 0x100);

  // An FDE whose CIE pointer leads nowhere.
  std::vector<uint8_t> bad = s;
  bad[fde_body] ^= 0x01;
  auto bad_frames = parse_eh_frame(bad, section_address, 8);
  ASSERT_FALSE(bad_frames.ok());
  EXPECT_NE(bad_frames.error().message.find("does not lead to a CIE"), std::string::npos);
}
