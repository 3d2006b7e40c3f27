#include "source/source_place.h"
#include "support/number_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <fmt/format.h>
#include <vector>

namespace xprobe::source {
namespace {

// Positions of the single ':' of a place (not those of a C++ "::").
std::vector<size_t> single_colons(std::string_view text) {
  std::vector<size_t> positions;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != ':') continue;
    if (i + 1 < text.size() && text[i + 1] == ':') {
      ++i;
      continue;
    }
    positions.push_back(i);
  }
  return positions;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

bool is_marker_word(std::string_view word) { return word.starts_with("%sdt_") || word.starts_with("sdt_"); }

// The BINARY prefix of a place, if it has one: everything before the first single ':' when
// that names a file (with a '/', or an ELF object here).
size_t binary_end(std::string_view text) {
  const std::vector<size_t> colons = single_colons(text);
  if (colons.empty()) return std::string_view::npos;
  const std::string prefix(text.substr(0, colons.front()));
  if (prefix.find('/') != std::string::npos || names_elf_file(prefix)) return colons.front();
  return std::string_view::npos;
}

bool looks_like_file(std::string_view text) {
  const size_t dot = text.rfind('.');
  return text.find('/') != std::string_view::npos ||
         (dot != std::string_view::npos && dot + 1 < text.size() && text.find("::") == std::string_view::npos);
}

}  // namespace

bool names_elf_file(const std::string& text) {
  const int fd = ::open(text.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::array<char, 4> magic{};
  const bool elf = ::read(fd, magic.data(), magic.size()) == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
                   magic[3] == 'F';
  ::close(fd);
  return elf;
}

bool is_source_place(std::string_view text) {
  size_t end = binary_end(text);
  std::string_view rest = end == std::string_view::npos ? text : text.substr(end + 1);
  if (rest.empty()) return false;
  if (is_marker_word(rest)) return true;
  if (rest.find(';') != std::string_view::npos) return true;
  if (rest.find('@') != std::string_view::npos) return true;
  const std::vector<size_t> colons = single_colons(rest);
  if (!colons.empty() && all_digits(rest.substr(colons.back() + 1))) return true;
  return false;
}

Result<SourcePlace> parse_source_place(std::string_view text) {
  SourcePlace place;
  place.text = std::string(text);
  auto bad = [&](std::string_view why) { return make_error(fmt::format("'{}': {}", text, why)); };
  const size_t end = binary_end(text);
  std::string_view rest = text;
  if (end != std::string_view::npos) {
    place.binary = std::string(text.substr(0, end));
    rest = text.substr(end + 1);
  }
  if (rest.empty()) return bad("nothing after the binary");

  if (is_marker_word(rest)) {
    place.kind = SourcePlace::Kind::Marker;
    rest.remove_prefix(rest[0] == '%' ? 5 : 4);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size())
      return bad("an SDT marker is written %sdt_PROVIDER:NAME");
    place.provider = std::string(rest.substr(0, colon));
    place.marker = std::string(rest.substr(colon + 1));
    if (place.marker.find(':') != std::string::npos) return bad("an SDT marker is written %sdt_PROVIDER:NAME");
    return place;
  }

  const size_t semicolon = rest.find(';');
  if (semicolon != std::string_view::npos) {
    place.pattern = std::string(rest.substr(semicolon + 1));
    if (place.pattern.empty()) return bad("an empty line pattern after ';'");
    rest = rest.substr(0, semicolon);
  } else if (rest.ends_with("%return")) {
    place.is_return = true;
    rest.remove_suffix(7);
  } else if (const std::vector<size_t> colons = single_colons(rest); !colons.empty()) {
    const std::string_view number = rest.substr(colons.back() + 1);
    auto line = parse_decimal_or_hex(number);
    if (!line || !all_digits(number)) return bad(fmt::format("'{}' is not a line number", number));
    if (*line > 10000000) return bad(fmt::format("line {} is out of range", *line));
    place.line = static_cast<unsigned>(*line);
    rest = rest.substr(0, colons.back());
  } else if (const size_t plus = rest.find('+'); plus != std::string_view::npos) {
    auto offset = parse_decimal_or_hex(rest.substr(plus + 1));
    if (!offset) return bad(fmt::format("'{}' is not an offset", rest.substr(plus + 1)));
    place.offset = *offset;
    rest = rest.substr(0, plus);
  }
  if (rest.empty()) return bad("no function or source file");

  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    place.function = std::string(rest.substr(0, at));
    place.file = std::string(rest.substr(at + 1));
    if (place.function.empty() || place.file.empty()) return bad("FUNC@SRC needs both");
    place.kind = SourcePlace::Kind::Function;
    return place;
  }
  if (looks_like_file(rest) && (place.line || !place.pattern.empty()) && !place.is_return && !place.offset) {
    place.file = std::string(rest);
    place.kind = place.line ? SourcePlace::Kind::FileLine : SourcePlace::Kind::FilePattern;
    return place;
  }
  place.function = std::string(rest);
  place.kind = SourcePlace::Kind::Function;
  return place;
}

}  // namespace xprobe::source
