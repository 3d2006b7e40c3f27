// xprobe decode: one line per instruction, ADDRESS<TAB>BYTES<TAB>LENGTH<TAB>KIND[<TAB>TARGET].
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "support/regular_file.h"
#include "elf/function_location.h"
#include "elf/elf_file.h"
#include "insn/summary.h"
#include "support/hex.h"

namespace xprobe::cli {
namespace {

// A linear sweep as objdump does it: an undecodable position prints `bad` and the sweep
// resumes one byte (x86) or one word (AArch64) later.
void sweep(insn::Arch arch, std::span<const uint8_t> bytes, uint64_t address, std::string& out) {
  size_t offset = 0;
  while (offset < bytes.size()) {
    const auto rest = bytes.subspan(offset);
    const uint64_t pc = address + offset;
    if (auto insn = insn::summarize(arch, rest, pc)) {
      fmt::format_to(std::back_inserter(out), "{:#x}\t{}\t{}\t{}", pc, format_hex_bytes(rest.first(insn->length)),
                     insn->length, insn->kind);
      if (insn->target) fmt::format_to(std::back_inserter(out), "\t{:#x}", *insn->target);
      out.push_back('\n');
      offset += insn->length;
    } else {
      const size_t step = std::min<size_t>(insn::bad_insn_step(arch), rest.size());
      fmt::format_to(std::back_inserter(out), "{:#x}\t{}\t{}\tbad\n", pc, format_hex_bytes(rest.first(step)), step);
      offset += step;
    }
    if (out.size() > (1u << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
}

}  // namespace

int run_decode(const DecodeOptions& options) {
  std::optional<insn::Arch> arch;
  if (!options.arch.empty()) {
    arch = insn::parse_arch(options.arch);
    if (!arch) {
      fmt::print(stderr, "xprobe decode: unknown architecture '{}' (x86_64, i386 or aarch64)\n", options.arch);
      return 2;
    }
  }
  std::string out;
  if (!options.hex.empty() || !options.raw_file.empty()) {
    std::vector<uint8_t> bytes;
    if (!options.hex.empty()) {
      auto parsed = parse_hex_bytes(options.hex);
      if (!parsed) {
        fmt::print(stderr, "xprobe decode: --hex '{}': not a list of hex bytes\n", options.hex);
        return 2;
      }
      bytes = std::move(*parsed);
    } else {
      auto raw = read_regular_file(options.raw_file);
      if (!raw) {
        fmt::print(stderr, "xprobe decode: {}\n", raw.error().message);
        return 1;
      }
      bytes = std::move(*raw);
    }
    sweep(arch.value_or(insn::Arch::X86_64), bytes, 0, out);
  } else {
    if (options.file.empty()) {
      fmt::print(stderr, "xprobe decode: give an ELF FILE, --raw FILE or --hex BYTES\n");
      return 2;
    }
    auto file = elf::ElfFile::open(options.file);
    if (!file) {
      fmt::print(stderr, "xprobe decode: {}\n", file.error().message);
      return 1;
    }
    const insn::Arch effective = arch.value_or(file->arch());
    if (!options.symbol.empty()) {
      auto location = elf::locate_in_function(*file, options.symbol);
      if (!location) {
        fmt::print(stderr, "xprobe decode: {}\n", location.error().message);
        return 1;
      }
      sweep(effective, location->function_bytes, location->function_start, out);
    } else {
      for (const elf::Section& section : file->sections())
        if (section.executable && section.has_file_bytes) sweep(effective, file->section_bytes(section), section.address, out);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace xprobe::cli
