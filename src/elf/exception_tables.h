#pragma once
// C++ exception landing pads: where the unwinder may transfer control to inside a function.
// A patch that overwrites several bytes in the middle of a function must never cover one, or
// a throw lands in the middle of the patch. The facts come from .eh_frame (CIEs and FDEs, as
// the LSB "Exception Frames" chapter describes them) and the LSDAs in .gcc_except_table that
// FDEs point to (the format libgcc's personality routine reads). All addresses are link-time
// addresses of a linked object (an executable or shared library: in a relocatable .o the
// pc-relative pointers are not resolved yet). The file is untrusted input: malformed tables
// are errors, never crashes. Multi-byte fields are read little-endian (x86, AArch64).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "elf/elf_file.h"
#include "support/result.h"

namespace xprobe::elf {

// One FDE of .eh_frame: the code range it describes and what its LSDA says about it.
struct FrameDescription {
  uint64_t pc_begin = 0;
  uint64_t pc_end = 0;                // exclusive
  uint64_t fde_address = 0;           // where the FDE lies in .eh_frame (for messages)
  std::optional<uint64_t> lsda;       // address of the LSDA, if the FDE has one
  // Landing pads of the LSDA, sorted, without duplicates; empty without an LSDA.
  std::vector<uint64_t> landing_pads;
  // Set when the LSDA is malformed: landing_pads is then empty and must not be trusted.
  std::optional<std::string> lsda_error;
};

// .eh_frame indexed once: FDEs sorted by pc_begin, each LSDA parsed. Queries are binary searches.
class ExceptionTables {
 public:
  // Errors when .eh_frame itself is malformed (the message names the offset). An object
  // without .eh_frame has no FDEs. A malformed LSDA is not an error here: it is reported by
  // the queries about the function it belongs to.
  static Result<ExceptionTables> index(const ElfFile& file);

  const std::vector<FrameDescription>& frames() const { return frames_; }
  const FrameDescription* frame_covering(uint64_t link_address) const;

  // Landing pads of the function whose FDE covers `link_address`; empty if it has no FDE or
  // no LSDA; an error if its LSDA is malformed.
  Result<std::vector<uint64_t>> landing_pads_covering(uint64_t link_address) const;

  // Landing pads in [begin, end) of every FDE (a patch range that may span FDEs); an error if
  // an FDE overlapping the range has a malformed LSDA.
  Result<std::vector<uint64_t>> landing_pads_in(uint64_t begin, uint64_t end) const;

 private:
  std::vector<FrameDescription> frames_;  // sorted by pc_begin, empty ranges dropped
};

// ExceptionTables::landing_pads_covering on the file's own index (ElfFile::exception_tables).
Result<std::vector<uint64_t>> landing_pads_covering(const ElfFile& file, uint64_t link_address);

// The .eh_frame parser, exposed for tests: FDEs (sorted, empty and discarded ones dropped)
// with their LSDA addresses, LSDAs not yet parsed. `section_address` is where `bytes` lie.
Result<std::vector<FrameDescription>> parse_eh_frame(std::span<const uint8_t> bytes, uint64_t section_address,
                                                     unsigned address_size);

// The LSDA parser, exposed for tests. `bytes` starts at the LSDA (at link-time address
// `lsda_address`) and may run past its end (to the end of its section); `function_start` is
// the FDE's pc_begin, the default LPStart. `address_size` is 4 or 8 (for DW_EH_PE_absptr).
Result<std::vector<uint64_t>> parse_lsda_landing_pads(std::span<const uint8_t> bytes, uint64_t lsda_address,
                                                      uint64_t function_start, unsigned address_size);

}  // namespace xprobe::elf
