#pragma once
// gdb as the oracle for source-level probes: where `break PLACE` puts its breakpoints, and
// what `printf` of expressions gives at each hit of a run.
#include <cstdint>
#include <string>
#include <vector>

namespace xprobe::testing {

// stdout of `sh -c command` (stderr dropped).
std::string shell_output(const std::string& command);

// The link-time addresses of every location of `break PLACE` in `binary`, sorted.
std::vector<uint64_t> gdb_breakpoint_addresses(const std::string& binary, const std::string& place);

struct GdbExpression {
  std::string expression;  // "order->hdr.len"
  std::string format;      // printf's: "%u", "%s"
};
// One line per hit of `break PLACE` while `binary args` runs: the expressions' values
// separated by single spaces.
std::vector<std::string> gdb_values_per_hit(const std::string& binary, const std::string& args, const std::string& place,
                                            const std::vector<GdbExpression>& expressions);

// Link-time address of a file offset in an ELF object (its PT_LOAD headers, by readelf).
uint64_t address_of_file_offset(const std::string& binary, uint64_t offset);

// And back: the file offset of a link-time address.
uint64_t file_offset_of_address(const std::string& binary, uint64_t address);

}  // namespace xprobe::testing
