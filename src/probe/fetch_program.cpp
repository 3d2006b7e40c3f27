#include "probe/fetch_program.h"

#include <fmt/format.h>

#include <algorithm>

namespace xprobe::probe {
namespace {

std::string signed_operand(int64_t value) {
  return value < 0 ? fmt::format("-{}", 0 - static_cast<uint64_t>(value)) : fmt::format("+{}", value);
}

class Compiler {
 public:
  Compiler(ProbeKind kind, const ArchProbeAbi& abi, const std::string& binary, FetchProgram& program)
      : kind_(kind), abi_(abi), binary_(binary), program_(program) {}

  void emit(FetchOp op, int64_t operand = 0, RegisterId reg = 0) { program_.code.push_back({op, reg, operand}); }

  // Code that leaves the source's value in the value register. Entry-probe argument mapping
  // comes from the ABI table; return probes read what the engine saved at entry.
  void load_source(const FetchSource& source) {
    switch (source.kind) {
      case FetchSource::Kind::Register: emit(FetchOp::LoadRegister, 0, source.reg); break;
      case FetchSource::Kind::StackPointer: emit(FetchOp::LoadRegister, 0, abi_.stack_pointer); break;
      case FetchSource::Kind::StackEntry: emit(FetchOp::LoadStackEntry, static_cast<int64_t>(source.value)); break;
      case FetchSource::Kind::ReturnValue: emit(FetchOp::LoadRegister, 0, abi_.return_value); break;
      case FetchSource::Kind::ReturnAddress:
        if (kind_ == ProbeKind::Return) emit(FetchOp::LoadReturnAddress);
        else if (abi_.link_register) emit(FetchOp::LoadRegister, 0, *abi_.link_register);
        else emit(FetchOp::LoadStackEntry, 0);
        break;
      case FetchSource::Kind::Argument:
        if (kind_ == ProbeKind::Return) emit(FetchOp::LoadSavedArgument, static_cast<int64_t>(source.value));
        else load_entry_argument(static_cast<unsigned>(source.value));
        break;
      case FetchSource::Kind::Immediate: emit(FetchOp::LoadImmediate, static_cast<int64_t>(source.value)); break;
      case FetchSource::Kind::SymbolAddress: {
        Relocation relocation;
        relocation.kind = Relocation::Kind::Symbol;
        relocation.symbol = source.text;
        relocation.binary = binary_;
        program_.relocations.push_back(std::move(relocation));
        emit(FetchOp::LoadRelocation, static_cast<int64_t>(program_.relocations.size() - 1));
        if (source.offset != 0) emit(FetchOp::AddOffset, source.offset);
        break;
      }
      case FetchSource::Kind::FileOffsetAddress: {
        Relocation relocation;
        relocation.kind = Relocation::Kind::FileOffset;
        relocation.binary = binary_;
        relocation.file_offset = source.value;
        program_.relocations.push_back(std::move(relocation));
        emit(FetchOp::LoadRelocation, static_cast<int64_t>(program_.relocations.size() - 1));
        break;
      }
      case FetchSource::Kind::Comm:
      case FetchSource::Kind::ImmediateString: break;  // stored directly
    }
  }

  void load_entry_argument(unsigned number) {
    const size_t in_registers = abi_.argument_registers.size();
    if (number <= in_registers) {
      emit(FetchOp::LoadRegister, 0, abi_.argument_registers[number - 1]);
    } else {
      emit(FetchOp::LoadStackEntry, static_cast<int64_t>(abi_.first_stack_argument_slot + (number - 1 - in_registers)));
    }
  }

  void compile(const ProbeArgument& argument) {
    const FetchExpression& expression = argument.expression;
    if (expression.source.kind == FetchSource::Kind::Comm) {
      emit(FetchOp::StoreComm);
      return;
    }
    if (expression.source.kind == FetchSource::Kind::ImmediateString) {
      program_.strings.push_back(expression.source.text);
      emit(FetchOp::StoreImmediateString, static_cast<int64_t>(program_.strings.size() - 1));
      return;
    }
    load_source(expression.source);
    const size_t count = expression.derefs.size();
    for (size_t i = 0; i + 1 < count; ++i) emit(FetchOp::Deref, expression.derefs[i].offset);
    const bool string = argument.type.is_string();
    if (count == 0) {
      // \IMM:string reads the string at that address, as the kernel does.
      emit(string ? FetchOp::StoreString : FetchOp::StoreRaw);
      return;
    }
    emit(FetchOp::AddOffset, expression.derefs.back().offset);
    emit(string ? FetchOp::StoreString : FetchOp::StoreMemory);
  }

 private:
  ProbeKind kind_;
  const ArchProbeAbi& abi_;
  const std::string& binary_;
  FetchProgram& program_;
};

unsigned stack_words(const FetchProgram& program) {
  unsigned words = 0;
  for (const FetchInstruction& instruction : program.code) {
    if (instruction.op == FetchOp::LoadStackEntry) {
      words = std::max(words, static_cast<unsigned>(std::min<int64_t>(instruction.operand, 1 << 20)) + 1);
    }
  }
  return words;
}

}  // namespace

bool FetchProgram::resolved() const {
  return std::all_of(relocations.begin(), relocations.end(), [](const Relocation& r) { return r.address.has_value(); });
}

std::string FetchProgram::disassemble(const ArchProbeAbi& abi) const {
  std::string out;
  for (const FetchInstruction& instruction : code) {
    switch (instruction.op) {
      case FetchOp::LoadRegister: out += fmt::format("load_reg {}\n", register_name(abi, instruction.reg)); break;
      case FetchOp::LoadStackEntry: out += fmt::format("load_stack {}\n", instruction.operand); break;
      case FetchOp::LoadSavedArgument: out += fmt::format("load_saved_arg {}\n", instruction.operand); break;
      case FetchOp::LoadReturnAddress: out += "load_retaddr\n"; break;
      case FetchOp::LoadImmediate: out += fmt::format("load_imm 0x{:x}\n", static_cast<uint64_t>(instruction.operand)); break;
      case FetchOp::LoadRelocation: {
        const Relocation& relocation = relocations.at(static_cast<size_t>(instruction.operand));
        if (relocation.kind == Relocation::Kind::Symbol) out += fmt::format("load_sym {}\n", relocation.symbol);
        else out += fmt::format("load_file_offset 0x{:x}\n", relocation.file_offset);
        break;
      }
      case FetchOp::Deref: out += fmt::format("deref {}\n", signed_operand(instruction.operand)); break;
      case FetchOp::AddOffset: out += fmt::format("add {}\n", signed_operand(instruction.operand)); break;
      case FetchOp::StoreRaw: out += fmt::format("store_raw {}\n", type.name()); break;
      case FetchOp::StoreMemory: out += fmt::format("store_mem {}\n", type.name()); break;
      case FetchOp::StoreString: out += fmt::format("store_string {}\n", type.name()); break;
      case FetchOp::StoreComm: out += "store_comm\n"; break;
      case FetchOp::StoreImmediateString: out += fmt::format("store_imm_string \"{}\"\n", strings.at(static_cast<size_t>(instruction.operand))); break;
    }
  }
  return out;
}

FetchProgram compile_argument(const ProbeArgument& argument, ProbeKind kind, const ArchProbeAbi& abi,
                              const std::string& binary) {
  FetchProgram program;
  program.name = argument.name;
  program.type = argument.type;
  program.word_size = abi.word_size;
  program.stack_pointer = abi.stack_pointer;
  Compiler(kind, abi, binary, program).compile(argument);
  return program;
}

ProbeFetchPlan compile_fetch_plan(const ProbeDefinition& definition, insn::Arch arch) {
  const ArchProbeAbi& abi = probe_abi(arch);
  ProbeFetchPlan plan;
  std::vector<unsigned> saved;
  for (const ProbeArgument& argument : definition.arguments) {
    plan.arguments.push_back(compile_argument(argument, definition.kind, abi, definition.place.binary));
    plan.stack_words_read = std::max(plan.stack_words_read, stack_words(plan.arguments.back()));
    if (definition.kind == ProbeKind::Return && argument.expression.source.kind == FetchSource::Kind::Argument) {
      saved.push_back(static_cast<unsigned>(argument.expression.source.value));
    }
  }
  std::sort(saved.begin(), saved.end());
  saved.erase(std::unique(saved.begin(), saved.end()), saved.end());
  for (unsigned number : saved) {
    // A program that only loads the argument's raw word at entry.
    ProbeArgument capture;
    capture.name = fmt::format("arg{}", number);
    capture.type = default_fetch_type(abi.word_size);
    capture.expression.source.kind = FetchSource::Kind::Argument;
    capture.expression.source.value = number;
    plan.entry_captures.emplace_back(number, compile_argument(capture, ProbeKind::Entry, abi));
  }
  return plan;
}

}  // namespace xprobe::probe
