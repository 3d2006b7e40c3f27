#pragma once
// An event's filter in the kernel's grammar (Documentation/trace/events.rst, "Event
// filtering"): predicates `FIELD OP VALUE` joined by && and || (&& binds tighter), negated by
// '!', grouped by parentheses. Numeric fields take == != < <= > >= & with a number as
// kstrtoull/kstrtoll read it (0x hex, 0 octal), compared at the field's size and signedness;
// string fields take == != ~ with a quoted text ('~': a glob, see filter_glob.h).
//
// The fields are those of the event's kernel format: its arguments by name, __probe_ip
// (entry) or __probe_func/__probe_ret_ip (return), the common fields (common_pid is the
// thread id, common_type/flags/preempt_count) and the generic ones (comm/COMM,
// cpu/CPU/common_cpu). A refused filter is reported with the kernel's message and position,
// as the kernel's events/GRP/EVENT/filter file shows it after a failed write.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "probe/fetch_type.h"
#include "probe/fetched_value.h"
#include "probe/agent/filter_match.h"

namespace xprobe::probe::filter {

// Where a field's value comes from at a hit.
enum class FieldSource : uint8_t {
  Argument,       // the event's argument `argument`
  ThreadId,       // common_pid: the thread's id, as the kernel's current->pid
  Comm,           // comm, COMM: the thread's name
  Cpu,            // cpu, CPU, common_cpu
  ProbeAddress,   // __probe_ip (entry probes), __probe_func (return probes)
  ReturnAddress,  // __probe_ret_ip (return probes)
  Zero,           // common_type, common_flags, common_preempt_count: 0 for a user-space probe
};

struct FilterField {
  std::string name;
  FieldSource source = FieldSource::Argument;
  uint32_t argument = 0;    // FieldSource::Argument: index among the event's arguments
  bool is_string = false;   // string, ustring, comm
  uint8_t size = 8;         // numbers: bytes compared (an array: all its elements as one integer)
  bool is_signed = false;
  FetchType type;           // FieldSource::Argument: the argument's type
};

// The fields of an event with these arguments, in the kernel's lookup order (the event's own
// fields first, so an argument named `comm` hides the generic one, as in the kernel).
std::vector<FilterField> event_fields(std::span<const std::string> argument_names,
                                      std::span<const FetchType> argument_types, bool is_return);

using agent::CompareOp;
using agent::StringMatch;
using agent::kMatchFull;

struct Predicate {
  uint32_t field = 0;  // index into EventFilter::fields
  CompareOp op = CompareOp::Equal;
  uint64_t number = 0;  // numbers: the value as the kernel read it (compared at the field's size)
  std::string pattern;  // strings: the text to match, stripped of the '*' and '!' that `match` says
  StringMatch match = kMatchFull;
  bool negate = false;  // != on a string, or a '~' pattern that began with '!'
};

// The expression in postfix: a Test pushes its predicate's result, And/Or pop two, Not one.
struct FilterStep {
  enum class Kind : uint8_t { Test, And, Or, Not };
  Kind kind = Kind::Test;
  uint32_t predicate = 0;  // Test
  bool operator==(const FilterStep&) const = default;
};

// What a filter looks at in one hit.
struct FilterInputs {
  std::span<const FetchedValue> values;  // the event's arguments, in order
  int64_t tid = 0;
  std::string_view comm;
  uint32_t cpu = 0;
  uint64_t probe_address = 0;   // entry: the probed address; return: the function's
  uint64_t return_address = 0;  // return probes
};

// A field's value at a hit: a number (the kernel's view of it: cut to the field's size) or a
// text (a string that could not be read is empty). Aggregations key and sum by it too.
struct FieldValue {
  bool is_string = false;
  uint64_t number = 0;
  std::string_view text;
};
FieldValue field_value(const FilterField& field, const FilterInputs& inputs);

// The field of that name among `fields`, or null.
const FilterField* find_field(const std::vector<FilterField>& fields, std::string_view name);

class EventFilter {
 public:
  EventFilter(std::string text, std::vector<FilterField> fields, std::vector<Predicate> predicates,
              std::vector<FilterStep> program)
      : text_(std::move(text)), fields_(std::move(fields)), predicates_(std::move(predicates)),
        program_(std::move(program)) {}
  // The filter as the kernel's filter file shows it (trailing white space cut).
  const std::string& text() const { return text_; }
  const std::vector<FilterField>& fields() const { return fields_; }
  const std::vector<Predicate>& predicates() const { return predicates_; }
  const std::vector<FilterStep>& program() const { return program_; }
  bool matches(const FilterInputs& inputs) const;
  bool predicate_holds(const Predicate& predicate, const FilterInputs& inputs) const;

 private:
  std::string text_;
  std::vector<FilterField> fields_;
  std::vector<Predicate> predicates_;
  std::vector<FilterStep> program_;
};

// A refused filter: the kernel's message and its position (the caret's column in `text`; the
// kernel's own off-by-one positions of errors inside a predicate are kept, so the caret lands
// where the kernel's does).
struct FilterError {
  std::string text;     // the filter, trailing white space cut
  std::string message;  // "Field not found", ...; "Error: (0)" where the kernel has no message
  std::optional<size_t> position;  // none where the kernel shows no caret
  // The kernel's own position before it is clamped to the text (error_log puts the caret
  // there: one past the end for an error found after trailing white space was cut).
  std::optional<size_t> log_position;
  // The filter, the caret line and "parse_error: MESSAGE" (or "Error: (0)"), each line ending
  // in '\n'.
  std::string render() const;
  // Exactly what the kernel's filter file shows after the failed write (render() and a blank
  // line).
  std::string filter_file_text() const;
  // The entry the kernel's error_log gets for the refused write, `seconds` its timestamp:
  // "[ SECONDS] event filter parse error: error: MESSAGE", the filter after "  Command: " and
  // the caret under the kernel's position.
  std::string error_log_entry(double seconds) const;
};

class FilterResult {
 public:
  FilterResult(EventFilter filter) : state_(std::move(filter)) {}  // NOLINT(google-explicit-constructor)
  FilterResult(FilterError error) : state_(std::move(error)) {}    // NOLINT(google-explicit-constructor)
  bool ok() const { return std::holds_alternative<EventFilter>(state_); }
  explicit operator bool() const { return ok(); }
  EventFilter& value() { return std::get<EventFilter>(state_); }
  const EventFilter& value() const { return std::get<EventFilter>(state_); }
  const FilterError& error() const { return std::get<FilterError>(state_); }

 private:
  std::variant<EventFilter, FilterError> state_;
};

// Whether `text` clears the event's filter, as writing "0" to the kernel's filter file does
// (an empty filter is refused there, and here).
bool clears_filter(std::string_view text);

FilterResult parse_event_filter(std::string_view text, std::vector<FilterField> fields);

}  // namespace xprobe::probe::filter
