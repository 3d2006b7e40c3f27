#include "source_support.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace xprobe::testing {

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer;
  size_t got = 0;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), got);
  pclose(pipe);
  return out;
}

std::vector<uint64_t> gdb_breakpoint_addresses(const std::string& binary, const std::string& place) {
  const std::string text =
      shell_output("gdb -batch -nx -ex 'break " + place + "' -ex 'info breakpoints' " + binary);
  std::vector<uint64_t> addresses;
  static const std::regex location(R"((0x[0-9a-f]+) in )");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), location); it != std::sregex_iterator(); ++it)
    addresses.push_back(std::stoull((*it)[1].str(), nullptr, 16));
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

std::vector<std::string> gdb_values_per_hit(const std::string& binary, const std::string& args, const std::string& place,
                                            const std::vector<GdbExpression>& expressions) {
  char script_path[] = "/tmp/xprobe-gdb-XXXXXX";
  const int fd = mkstemp(script_path);
  if (fd < 0) return {};
  close(fd);
  {
    std::ofstream script(script_path);
    script << "set pagination off\nset confirm off\nbreak " << place << "\ncommands\nsilent\nprintf \"HIT\"\n";
    for (const GdbExpression& e : expressions) script << "printf \" " << e.format << "\", " << e.expression << "\n";
    script << "printf \"\\n\"\ncontinue\nend\nrun " << args << " >/dev/null\n";
  }
  const std::string text = shell_output("gdb -batch -nx -x " + std::string(script_path) + " " + binary);
  unlink(script_path);
  std::vector<std::string> hits;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("HIT", 0) == 0) hits.push_back(line.size() > 4 ? line.substr(4) : "");
  return hits;
}

namespace {

struct LoadSegment {
  uint64_t file_offset;
  uint64_t vaddr;
  uint64_t file_size;
};

// The binary's PT_LOAD segments as readelf (the oracle, not xprobe's ELF reader) lists them.
std::vector<LoadSegment> load_segments(const std::string& binary) {
  const std::string text = shell_output("readelf -lW " + binary);
  static const std::regex load(R"(LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+))");
  std::vector<LoadSegment> segments;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), load); it != std::sregex_iterator(); ++it) {
    segments.push_back({std::stoull((*it)[1].str(), nullptr, 16), std::stoull((*it)[2].str(), nullptr, 16),
                        std::stoull((*it)[3].str(), nullptr, 16)});
  }
  return segments;
}

}  // namespace

uint64_t address_of_file_offset(const std::string& binary, uint64_t offset) {
  for (const LoadSegment& segment : load_segments(binary)) {
    if (offset >= segment.file_offset && offset < segment.file_offset + segment.file_size)
      return segment.vaddr + (offset - segment.file_offset);
  }
  return 0;
}

uint64_t file_offset_of_address(const std::string& binary, uint64_t address) {
  for (const LoadSegment& segment : load_segments(binary)) {
    if (address >= segment.vaddr && address < segment.vaddr + segment.file_size)
      return segment.file_offset + (address - segment.vaddr);
  }
  return 0;
}

}  // namespace xprobe::testing
