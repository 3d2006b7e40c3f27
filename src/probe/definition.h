#pragma once
// A parsed probe definition in the kernel's uprobe_events grammar (plus xprobe's extensions:
// symbolic places, @SYM, $argN, the seed's short aliases). Nothing here is resolved yet:
// binaries, symbols and globs are text for the resolver.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/arch_registers.h"
#include "probe/fetch_type.h"

namespace xprobe::probe {

enum class ProbeKind : uint8_t { Entry, Return, Delete };

struct ProbePlace {
  enum class Kind : uint8_t {
    Symbol,          // [BINARY:]SYMBOL[+|-OFFS]; SYMBOL may be a glob
    FileOffset,      // BINARY:0xOFFSET, a file offset as in uprobe_events
    VirtualAddress,  // 0xADDR in the target's address space
  };
  Kind kind = Kind::Symbol;
  std::string binary;  // empty: the main executable
  std::string symbol;  // Kind::Symbol
  int64_t offset = 0;  // Kind::Symbol: bytes from the symbol
  uint64_t address = 0;  // Kind::FileOffset: file offset; Kind::VirtualAddress: address
  std::optional<uint64_t> ref_ctr_offset;  // uprobe_events "(REF_CTR_OFFSET)" suffix
  bool is_glob = false;  // the symbol contains * ? or [
  std::string text;      // as written
};

// Where the first value of a fetch argument comes from.
struct FetchSource {
  enum class Kind : uint8_t {
    Register,        // %REG, rN
    StackPointer,    // $stack
    StackEntry,      // $stackN, sN (the Nth word at the stack pointer)
    ReturnValue,     // $retval, rv
    ReturnAddress,   // rp
    Comm,            // $comm
    Argument,        // $argN, aN (N >= 1, the ABI's Nth integer argument)
    Immediate,       // \IMM, and @ADDR (followed by a dereference)
    ImmediateString, // \"STRING"
    SymbolAddress,   // @SYM[+|-OFFS] (followed by a dereference); resolved later
    FileOffsetAddress,  // @+OFFSET: an address in the probed binary (followed by a dereference)
  };
  Kind kind = Kind::Immediate;
  RegisterId reg = 0;   // Register
  uint64_t value = 0;   // StackEntry index, Argument number, Immediate value, file offset
  int64_t offset = 0;   // SymbolAddress offset
  std::string text;     // register name, symbol name, immediate string
};

// +OFFS(...) / -OFFS(...) / +uOFFS(...): read a word at (inner value + offset).
struct Dereference {
  int64_t offset = 0;
  bool user = false;  // the 'u' prefix; all memory is user memory here, kept for display
};

struct FetchExpression {
  FetchSource source;
  std::vector<Dereference> derefs;  // innermost first; the last one is the outermost
  bool is_memory() const { return !derefs.empty(); }
};

struct ProbeArgument {
  std::string name;         // NAME=..., or "argN" (N = position, from 1) as the kernel names it
  bool name_given = false;
  FetchExpression expression;
  FetchType type;
  bool type_given = false;
  std::string text;         // the whole argument as written ("name=+0(%di):u32")
  size_t column = 0;        // where it starts in ProbeDefinition::command
};

struct ProbeDefinition {
  ProbeKind kind = ProbeKind::Entry;
  std::string group = "uprobes";
  bool group_given = false;
  std::string event;        // explicit or derived; empty for a glob place without a name
                            // (and for a Delete of every event of a group, "-:GRP/")
  bool event_given = false;
  std::optional<unsigned> maxactive;  // r[MAXACTIVE]
  ProbePlace place;         // unused for Delete
  std::vector<ProbeArgument> arguments;
  // Delete only: "-:GRP/EVENT PLACE [NAME=FETCHARG...]" removes only the probe points of the
  // event whose place (and first arguments) read exactly like these words, as the kernel's
  // trace_uprobe_match_command_head() compares them.
  std::vector<std::string> delete_match;
  std::string command;      // the definition with its words joined by single spaces
  std::optional<size_t> line;  // line number in a -f file
};

// Event name for a place without an explicit one, in the kernel's manner:
//   BINARY:0xOFF          -> p_<basename up to its first '.', '-' or '_'>_0x<off> (as uprobes)
//   [BINARY:]SYMBOL       -> SYMBOL (the seed), SYMBOL_<off> with an offset,
//                            SYMBOL__return for a return probe (perf probe's convention)
//   0xADDR                -> p_0x<addr> / r_0x<addr>
// Characters that cannot be in a C identifier become '_'. The resolver calls it for every
// symbol a glob matches.
std::string derive_event_name(const ProbePlace& place, ProbeKind kind, const std::string& symbol);

}  // namespace xprobe::probe
