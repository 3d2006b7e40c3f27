#include "objdump_listing.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace xprobe::test {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool parse_hex_u64(std::string_view text, uint64_t& value) {
  value = 0;
  if (text.empty()) return false;
  for (char c : text) {
    const int v = hex_value(c);
    if (v < 0) return false;
    value = value * 16 + static_cast<uint64_t>(v);
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<ObjdumpSection> run_objdump(const std::string& file, const std::string& extra_options) {
  // The listing of a large binary is >100 MB: read it in big blocks and parse it in place,
  // which keeps the test fast under ASan.
  const std::string command = "objdump -d -z -w --insn-width=16 " + extra_options + " '" + file + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  std::string listing;
  {
    std::vector<char> block(1 << 20);
    size_t got;
    while ((got = fread(block.data(), 1, block.size(), pipe.get())) > 0) listing.append(block.data(), got);
  }
  std::vector<ObjdumpSection> sections;
  size_t line_start = 0;
  while (line_start < listing.size()) {
    size_t line_end = listing.find('\n', line_start);
    if (line_end == std::string::npos) line_end = listing.size();
    const std::string_view line(listing.data() + line_start, line_end - line_start);
    line_start = line_end + 1;
    std::string_view view = trim(line);
    if (view.empty()) continue;
    constexpr std::string_view kSection = "Disassembly of section ";
    if (view.substr(0, kSection.size()) == kSection) {
      ObjdumpSection section;
      section.name = std::string(view.substr(kSection.size(), view.size() - kSection.size() - 1));
      sections.push_back(std::move(section));
      continue;
    }
    if (sections.empty()) continue;
    ObjdumpSection& section = sections.back();
    // "0000000000001000 <name>:"
    if (view.back() == ':' && view.find(" <") != std::string_view::npos) {
      uint64_t address;
      if (parse_hex_u64(view.substr(0, view.find(' ')), address)) section.symbols.push_back(address);
      continue;
    }
    // "  401126:\t48 8d 15 db ff ff ff \tlea ..."
    const size_t colon = view.find(":\t");
    if (colon == std::string_view::npos) continue;
    uint64_t address;
    if (!parse_hex_u64(view.substr(0, colon), address)) continue;
    std::string_view rest = view.substr(colon + 2);
    const size_t tab = rest.find('\t');
    const std::string_view hex = rest.substr(0, tab);
    const std::string_view text = tab == std::string_view::npos ? std::string_view{} : trim(rest.substr(tab + 1));
    if (section.insns.empty()) {
      section.start = address;
      if (section.name == ".text") {  // by far the largest section: avoid regrowing it
        section.insns.reserve(listing.size() / 100);
        section.bytes.reserve(listing.size() / 25);
      }
    }
    const uint64_t expected = section.start + section.bytes.size();
    if (address != expected)
      throw std::runtime_error("objdump output of " + file + " is not contiguous at 0x" + std::to_string(address));
    ObjdumpInsn insn;
    insn.address = address;
    insn.offset = static_cast<uint32_t>(section.bytes.size());
    for (size_t k = 0; k < hex.size();) {
      if (hex[k] == ' ') {
        ++k;
        continue;
      }
      const int hi = hex_value(hex[k]), lo = k + 1 < hex.size() ? hex_value(hex[k + 1]) : -1;
      if (hi < 0 || lo < 0) throw std::runtime_error("bad byte in objdump line: " + std::string(view));
      section.bytes.push_back(static_cast<uint8_t>(hi * 16 + lo));
      k += 2;
    }
    insn.length = static_cast<uint8_t>(section.bytes.size() - insn.offset);
    insn.mnemonic = std::string(text.substr(0, text.find(' ')));
    insn.bad = text.find("(bad)") != std::string_view::npos;
    if (insn.length == 0) throw std::runtime_error("objdump line without bytes: " + std::string(view));
    section.insns.push_back(std::move(insn));
  }
  return sections;
}

}  // namespace xprobe::test
