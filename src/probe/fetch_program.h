#pragma once
// Fetch programs: each probe argument compiled into a short bytecode that every engine runs
// the same way (trap engine in the tracer, tests on fakes; the jump engine can replay the
// same ops on its saved registers).
//
// A program is a load, zero or more dereferences, and one store:
//   +8(+0(%di)):u32  ->  load_reg di; deref +0; add +8; store_mem u32
//   $stack2          ->  load_stack 2; store_raw x64
//   @count:s32       ->  load_sym #0 (count); add +0; store_mem s32
// The last dereference of an expression is the store's own read (as in the kernel), so
// `+0(%si):string` reads the string at %si.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "insn/arch.h"
#include "probe/definition.h"
#include "probe/fetch_interfaces.h"
#include "probe/fetched_value.h"

namespace xprobe::probe {

enum class FetchOp : uint8_t {
  LoadRegister,        // value = register `reg`
  LoadStackEntry,      // value = word at sp + operand * word_size
  LoadSavedArgument,   // value = environment.saved_arguments[operand - 1] (return probes)
  LoadReturnAddress,   // value = environment.return_address (return probes)
  LoadImmediate,       // value = operand
  LoadRelocation,      // value = relocations[operand].address (filled by the resolver)
  Deref,               // value = word at value + operand
  AddOffset,           // value += operand
  StoreRaw,            // the value itself, truncated to the type
  StoreMemory,         // type.size * max(1, count) bytes at value
  StoreString,         // NUL-terminated string at value; arrays: `count` char* at value
  StoreComm,           // the thread's comm
  StoreImmediateString,  // strings[operand]
};

struct FetchInstruction {
  FetchOp op;
  RegisterId reg = 0;
  int64_t operand = 0;
  bool operator==(const FetchInstruction&) const = default;
};

// An address the resolver provides before the program can run: a data symbol (@SYM) or a
// file offset in the probed binary (@+OFFSET).
struct Relocation {
  enum class Kind : uint8_t { Symbol, FileOffset };
  Kind kind = Kind::Symbol;
  std::string symbol;          // Kind::Symbol
  std::string binary;          // the probe's binary (empty: main executable)
  uint64_t file_offset = 0;    // Kind::FileOffset
  std::optional<uint64_t> address;  // set by the resolver
};

struct FetchProgram {
  std::string name;   // the argument's name
  FetchType type;
  unsigned word_size = 8;
  RegisterId stack_pointer = 0;  // for load_stack
  std::vector<FetchInstruction> code;
  std::vector<Relocation> relocations;
  std::vector<std::string> strings;  // immediate strings

  bool resolved() const;
  // One instruction per line, e.g. "load_reg di\nderef +0\nstore_mem u32\n".
  std::string disassemble(const ArchProbeAbi& abi) const;
};

struct FetchEnvironment {
  const RegisterView& registers;
  MemoryReader& memory;
  std::string_view comm;                      // the thread's name (16 bytes at most)
  std::optional<uint64_t> return_address;     // return probes: where the function returns to
  std::span<const uint64_t> saved_arguments;  // return probes: $argN saved at entry
};

// Everything one probe needs per hit.
struct ProbeFetchPlan {
  std::vector<FetchProgram> arguments;
  // Return probes: the $argN the engine must save at entry, as programs to run at entry
  // (each yields a raw word); capture_entry_arguments() runs them.
  std::vector<std::pair<unsigned, FetchProgram>> entry_captures;
  // Batching hint: the stack words [sp, sp + stack_words_read * word) the programs read
  // directly ($stackN, stack-passed $argN), so a target can fetch them in one read.
  unsigned stack_words_read = 0;
};

FetchProgram compile_argument(const ProbeArgument& argument, ProbeKind kind, const ArchProbeAbi& abi,
                              const std::string& binary = {});
ProbeFetchPlan compile_fetch_plan(const ProbeDefinition& definition, insn::Arch arch);

FetchedValue run(const FetchProgram& program, const FetchEnvironment& environment);
std::vector<FetchedValue> run_all(const ProbeFetchPlan& plan, const FetchEnvironment& environment);
// At the entry of a return probe's function: the values its programs will need as
// saved_arguments (index N-1 holds $argN; zero where not captured or faulted).
std::vector<uint64_t> capture_entry_arguments(const ProbeFetchPlan& plan, const RegisterView& registers,
                                              MemoryReader& memory);

}  // namespace xprobe::probe
