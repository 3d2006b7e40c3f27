#pragma once
// The probe the filter and aggregation tests put on programs/filter_calls.c's visit(), in the
// kernel's syntax (a file offset), so the kernel and xprobe get the same line.
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "trace_runner.h"

namespace xprobe::testing {

inline std::string visit_definition() {
  const std::string bin = FILTER_CALLS_PATH;
  return fmt::format("p:xpt_oracle/visit {}:{:#x} n=%di:s64 u=%si:u32 name=+0(%dx):string s=%cx:s16", bin,
                     file_offset_of(bin, "visit"));
}

// The --summary line "ring records read: N" and the event's row "RECORDED MISSED FILTERED".
struct SummaryCounts {
  long ring_records = -1;
  long recorded = -1, missed = -1, filtered = -1;
};

inline SummaryCounts summary_counts(const std::string& diagnostics, const std::string& event) {
  SummaryCounts counts;
  std::istringstream lines(diagnostics);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ring records read: ", 0) == 0) counts.ring_records = std::stol(line.substr(19));
    if (line.rfind(event + " ", 0) == 0) {
      std::istringstream words(line.substr(event.size()));
      words >> counts.recorded >> counts.missed >> counts.filtered;
    }
  }
  return counts;
}

}  // namespace xprobe::testing
