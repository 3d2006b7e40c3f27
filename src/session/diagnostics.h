#pragma once
// How a trace session tells its user what happened: problems, notices and, at the end, the
// per-probe counts. The session never prints; the command (cli/) decides how these look (the
// "xprobe: " prefix, stderr). Tests can collect them.
#include <optional>
#include <string>

#include "probe/parse_error.h"
#include "trace/event_record.h"
#include "trace/probe_statistics.h"

namespace xprobe::session {

enum class Severity {
  Usage,    // the command line is incomplete (no definitions, no program): nothing started
  Error,    // something refused or failed; what it concerns did not happen
  Warning,  // tracing goes on without something (a probe, a jump optimization)
  Note,     // what the session does next (waiting for a detached program)
};

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string message;  // one or more lines, without a trailing newline
  // A definition the parser refused: shown with its command and caret (ParseError::render).
  // `message`, if not empty, is a line of context printed before it.
  std::optional<probe::ParseError> parse_error;
};

class Diagnostics {
 public:
  virtual ~Diagnostics() = default;
  virtual void report(const Diagnostic& diagnostic) = 0;
  // Tracing is over: every probe's hits and misses, and how many events were dropped.
  virtual void tracing_ended(const trace::EventCatalog& catalog, const trace::ProbeStatistics& statistics) = 0;
};

}  // namespace xprobe::session
