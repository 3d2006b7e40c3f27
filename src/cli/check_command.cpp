// xprobe check: may a probe go at FILE SYMBOL[+OFFS]? Exit 0 when accepted.
#include <fmt/format.h>

#include "arch/probe_point_check.h"
#include "cli/commands.h"
#include "elf/function_location.h"
#include "elf/elf_file.h"

namespace xprobe::cli {
int run_check(const CheckOptions& options) {
  auto file = elf::ElfFile::open(options.file);
  if (!file) {
    fmt::print(stderr, "xprobe check: {}\n", file.error().message);
    return 2;
  }
  insn::Arch arch = file->arch();
  if (!options.arch.empty()) {
    auto parsed = insn::parse_arch(options.arch);
    if (!parsed) {
      fmt::print(stderr, "xprobe check: unknown architecture '{}' (x86_64, i386 or aarch64)\n", options.arch);
      return 2;
    }
    arch = *parsed;
  }
  auto location = elf::locate_in_function(*file, options.place);
  if (!location) {
    fmt::print(stderr, "xprobe check: {}\n", location.error().message);
    return 2;
  }
  const arch::CheckOutcome outcome =
      arch::check_probe_point(arch, location->function_bytes, location->function_start, location->address);
  fmt::print("{}\n", outcome.message());
  return outcome.accepted() ? 0 : 1;
}

}  // namespace xprobe::cli
