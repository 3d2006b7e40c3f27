#include "target/maps.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace xprobe::target {
namespace {

bool parse_hex(std::string_view& text, uint64_t& out) {
  size_t used = 0;
  uint64_t value = 0;
  while (used < text.size()) {
    char c = text[used];
    unsigned digit = 0;
    if (c >= '0' && c <= '9') digit = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') digit = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') digit = static_cast<unsigned>(c - 'A' + 10);
    else break;
    if (value >> 60) return false;
    value = value * 16 + digit;
    ++used;
  }
  if (used == 0) return false;
  out = value;
  text.remove_prefix(used);
  return true;
}

bool expect(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

void skip_spaces(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
}

bool parse_decimal(std::string_view& text, uint64_t& out) {
  size_t used = 0;
  uint64_t value = 0;
  while (used < text.size() && text[used] >= '0' && text[used] <= '9') {
    value = value * 10 + static_cast<uint64_t>(text[used] - '0');
    ++used;
  }
  if (used == 0) return false;
  out = value;
  text.remove_prefix(used);
  return true;
}

bool parse_line(std::string_view line, MapEntry& entry) {
  uint64_t ignored = 0;
  if (!parse_hex(line, entry.start) || !expect(line, '-') || !parse_hex(line, entry.end)) return false;
  skip_spaces(line);
  if (line.size() < 4) return false;
  entry.readable = line[0] == 'r';
  entry.writable = line[1] == 'w';
  entry.executable = line[2] == 'x';
  entry.shared = line[3] == 's';
  line.remove_prefix(4);
  skip_spaces(line);
  if (!parse_hex(line, entry.offset)) return false;
  skip_spaces(line);
  if (!parse_hex(line, ignored) || !expect(line, ':') || !parse_hex(line, ignored)) return false;  // device
  skip_spaces(line);
  if (!parse_decimal(line, entry.inode)) return false;
  skip_spaces(line);
  entry.path = std::string(line);
  return entry.start <= entry.end;
}

}  // namespace

Result<std::vector<MapEntry>> parse_maps(std::string_view text) {
  std::vector<MapEntry> entries;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (line.empty()) continue;
    MapEntry entry;
    if (!parse_line(line, entry)) {
      return make_error(fmt::format("malformed maps line {}: '{}'", line_number, line));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::vector<MapEntry>> read_maps(pid_t pid) {
  std::string path = fmt::format("/proc/{}/maps", pid);
  std::ifstream file(path);
  if (!file) return make_error(fmt::format("cannot read {}", path));
  std::stringstream contents;
  contents << file.rdbuf();
  return parse_maps(contents.str());
}

const MapEntry* find_mapping(const std::vector<MapEntry>& maps, uint64_t address) {
  for (const MapEntry& entry : maps) {
    if (entry.contains(address)) return &entry;
  }
  return nullptr;
}

}  // namespace xprobe::target
