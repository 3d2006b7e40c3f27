#pragma once
// The probe the filter and aggregation tests put on programs/filter_calls.c's visit(), in the
// kernel's syntax (a file offset), so the kernel and xprobe get the same line.
#include <string>

#include <fmt/format.h>

#include "trace_runner.h"

namespace xprobe::testing {

inline std::string visit_definition() {
  const std::string bin = FILTER_CALLS_PATH;
  return fmt::format("p:xpt_oracle/visit {}:{:#x} n=%di:s64 u=%si:u32 name=+0(%dx):string s=%cx:s16", bin,
                     file_offset_of(bin, "visit"));
}

}  // namespace xprobe::testing
