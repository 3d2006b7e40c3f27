#include "elf/go_program.h"

#include <algorithm>

namespace xprobe::elf {

bool is_go_program(const ElfFile& file) {
  return std::any_of(file.sections().begin(), file.sections().end(),
                     [](const Section& section) { return section.name == ".go.buildinfo"; });
}

}  // namespace xprobe::elf
