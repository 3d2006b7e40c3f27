#include "parse_one_input.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "probe/definition_parser.h"
#include "probe/fetch_program.h"

namespace xprobe::fuzz {
namespace {

// Registers hold bytes of the input; memory is readable only in one window and otherwise
// faults, like an untrusted process full of bad pointers.
class HostileRegisters final : public probe::RegisterView {
 public:
  explicit HostileRegisters(uint64_t seed) : seed_(seed) {}
  uint64_t read(probe::RegisterId id) const override { return seed_ * (id + 1) ^ 0x7fff0000u; }

 private:
  uint64_t seed_;
};

class HostileMemory final : public probe::MemoryReader {
 public:
  bool read(uint64_t address, std::span<uint8_t> out) override {
    if (address < 0x7fff0000u || address - 0x7fff0000u > 0x10000u - out.size()) return false;
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>((address + i) * 131u);
    return true;
  }
};

void check(bool condition) {
  if (!condition) std::abort();
}

void exercise(const probe::ProbeDefinition& definition, insn::Arch arch) {
  probe::ProbeFetchPlan plan = probe::compile_fetch_plan(definition, arch);
  check(plan.arguments.size() == definition.arguments.size());
  HostileRegisters registers(definition.command.size());
  HostileMemory memory;
  const std::vector<uint64_t> saved = probe::capture_entry_arguments(plan, registers, memory);
  const probe::FetchEnvironment environment{registers, memory, "fuzz", uint64_t{0x7fff0100}, saved};
  for (size_t i = 0; i < plan.arguments.size(); ++i) {
    const probe::FetchedValue value = probe::run(plan.arguments[i], environment);
    const size_t expected = std::max<size_t>(1, plan.arguments[i].type.array_count);
    check(value.element_count() == expected);
    for (const auto& text : value.strings) check(!text || text->size() < probe::kMaxStringSize);
    (void)plan.arguments[i].disassemble(probe::probe_abi(arch));
  }
}

}  // namespace

void parse_one_input(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (insn::Arch arch : {insn::Arch::X86_64, insn::Arch::I386, insn::Arch::AArch64}) {
    const probe::ParseOptions options{arch};
    const std::string_view first_line = text.substr(0, text.find('\n'));
    auto parsed = probe::parse_definition(first_line, options);
    if (parsed.ok()) {
      check(parsed->arguments.size() <= probe::kMaxArguments);
      exercise(parsed.value(), arch);
    } else {
      check(!parsed.error().message.empty());
      check(parsed.error().column <= parsed.error().command.size() + 1);
      (void)parsed.error().render();
    }
    auto file = probe::parse_definitions_file(text, "fuzz", options);
    if (!file.ok()) check(file.error().line.has_value());
  }
}

}  // namespace xprobe::fuzz
