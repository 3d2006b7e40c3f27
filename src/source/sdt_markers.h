#pragma once
// USDT markers: the notes of .note.stapsdt (systemtap's <sys/sdt.h>, also what DTRACE_PROBE
// and bpftrace's usdt read). Each holds the marker's pc, the link-time address of
// .stapsdt.base (to correct for prelinking), its semaphore's address (0: none) and its
// arguments as the assembler wrote them: "SIZE@OPERAND" words, the operand in the syntax of
// the object's architecture.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::source {

struct SdtMarker {
  std::string provider;
  std::string name;
  uint64_t pc = 0;         // link-time address of the marker's nop, corrected by .stapsdt.base
  uint64_t semaphore = 0;  // link-time address of its unsigned short semaphore, 0 without
  std::string arguments;   // as in the note
};

// Every marker of the object; a malformed note is an error naming it.
Result<std::vector<SdtMarker>> read_sdt_markers(const std::string& path);

struct SdtArgument {
  std::string fetcharg;  // the kernel's form: "%di", "-16(%bp)", "\\5"
  std::string type;      // from the size and sign: "s32", "u64"
};

// One argument of a marker ("-4@" and an operand) in the kernel's syntax. Operands fetch arguments
// cannot express (an index register) are an error that says which.
Result<SdtArgument> translate_sdt_argument(std::string_view argument, insn::Arch arch);
// Splits a note's argument string at its spaces.
std::vector<std::string> split_sdt_arguments(std::string_view arguments);

}  // namespace xprobe::source
