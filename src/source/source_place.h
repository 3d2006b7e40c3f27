#pragma once
// perf probe's places, next to the kernel's:
//   [BINARY:]FUNC[@SRC][:RLN|+OFFS|%return|;PTN]   a function (every instance), a line
//                                                  relative to its name's line, an offset,
//                                                  its return, a lazy line pattern in it
//   [BINARY:]SRC:ALN                               an absolute line of a source file
//   [BINARY:]SRC;PTN                               lines of a file matching a pattern
//   [BINARY:]%sdt_PROVIDER:NAME, sdt_PROVIDER:NAME  a USDT marker of .note.stapsdt (globs)
// C++ names keep their '::' ("ns::Cls::method:3"). A BINARY is a leading path to an existing
// file (a word with a '/', or an ELF file in the current directory).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/result.h"

namespace xprobe::source {

struct SourcePlace {
  enum class Kind : uint8_t { Function, FileLine, FilePattern, Marker };
  Kind kind = Kind::Function;
  std::string binary;      // empty: the main executable
  std::string function;    // Function
  std::string file;        // @SRC, or the SRC of FileLine/FilePattern
  std::optional<unsigned> line;  // Function: relative line (:RLN); FileLine: absolute line
  std::optional<uint64_t> offset;  // Function: +OFFS
  bool is_return = false;  // Function: %return
  std::string pattern;     // ;PTN
  std::string provider;    // Marker
  std::string marker;      // Marker
  std::string text;        // as written
};

// True when the place is in perf probe's form rather than the kernel's (a line, '@', ';',
// an SDT marker). A plain "FUNC" is the kernel's form too; the expander decides whether the
// debug information makes it more (inlined instances).
bool is_source_place(std::string_view text);

Result<SourcePlace> parse_source_place(std::string_view text);

// Does `text` name an existing file that is an ELF object (for telling "srv:12" from "srv.c:12").
bool names_elf_file(const std::string& text);

}  // namespace xprobe::source
