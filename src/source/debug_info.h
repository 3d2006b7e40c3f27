#pragma once
// The DWARF of an ELF object, from the object itself or from its separate debug file:
//   1. the object's own .debug_info;
//   2. by build-id: DIR/.build-id/xx/yyyy.debug (xx the first byte of NT_GNU_BUILD_ID in hex);
//   3. by .gnu_debuglink NAME: the object's directory/NAME, its directory/.debug/NAME, then
//      DIR/<the object's directory>/NAME (gdb's order), the debug file's CRC32 checked.
// DIR is each entry of $XPROBE_DEBUG_FILE_DIRECTORY (':'-separated), else /usr/lib/debug.
// The debug file is untrusted input like the object: libdw reads it, and every error is a
// value.
#include <elfutils/libdw.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "insn/arch.h"
#include "support/result.h"

namespace xprobe::source {

class DebugInfo {
 public:
  // Errors: the object cannot be read, or it has no DWARF and no debug file was found (the
  // message names every path tried).
  static Result<std::unique_ptr<DebugInfo>> open(const std::string& object_path);
  ~DebugInfo();
  DebugInfo(const DebugInfo&) = delete;
  DebugInfo& operator=(const DebugInfo&) = delete;

  const std::string& object_path() const { return object_path_; }
  const std::string& debug_path() const { return debug_path_; }  // == object_path() when built in
  Dwarf* dwarf() const { return dwarf_; }
  Elf* debug_elf() const { return debug_elf_; }
  Elf* object_elf() const { return object_elf_; }
  insn::Arch arch() const { return arch_; }
  // Call frame information for CFA rules: .eh_frame of the object, else .debug_frame.
  Dwarf_CFI* eh_cfi() const { return eh_cfi_; }
  Dwarf_CFI* debug_cfi() const { return debug_cfi_; }

 private:
  DebugInfo() = default;
  std::string object_path_;
  std::string debug_path_;
  int object_fd_ = -1;
  int debug_fd_ = -1;
  Elf* object_elf_ = nullptr;
  Elf* debug_elf_ = nullptr;
  Dwarf* dwarf_ = nullptr;
  Dwarf_CFI* eh_cfi_ = nullptr;
  Dwarf_CFI* debug_cfi_ = nullptr;
  insn::Arch arch_ = insn::Arch::X86_64;
};

// The directories searched for separate debug files, in order.
std::vector<std::string> debug_file_directories();

// The build id of an ELF object in hex, empty when it has none.
std::string build_id_of(Elf* elf);

}  // namespace xprobe::source
