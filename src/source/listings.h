#pragma once
// What perf probe -F/-L/-V and bpftrace -l show, for `xprobe list`:
//   functions(GLOB)  the functions of the debug information (else the ELF symbols), with how
//                    many inlined copies each has;
//   lines(FUNC)      the function's source, its probe-able lines numbered relative to the
//                    line of its name (perf probe -L: FUNC:N is a place for each number);
//   variables(PLACE) per address of the place, the variables in scope and their types, those
//                    without a location there marked;
//   markers(GLOB)    the SDT markers (provider:name glob), pc, semaphore and arguments.
#include <string>
#include <string_view>

#include "source/source_definition.h"
#include "support/result.h"

namespace xprobe::source {

Result<std::string> list_functions(SourceObject& object, std::string_view glob);
Result<std::string> list_lines(SourceObject& object, std::string_view function);
Result<std::string> list_variables(SourceObjects& objects, const std::string& binary, std::string_view place);
Result<std::string> list_markers(SourceObject& object, std::string_view glob);

}  // namespace xprobe::source
