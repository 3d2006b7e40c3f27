#pragma once
// The filters of a session's events, by GROUP/EVENT: set from --filter, a definition's
// trailing `if EXPR`, or (through set()) a live control surface writing an event's filter
// file. A filter is parsed against the event's fields when it is set, so a bad one is refused
// with the kernel's message and caret before it replaces anything; an event gets the filter
// set for its name whenever it is planted (again after an exec, or when its library loads).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "probe/filter/event_filter.h"
#include "trace/event_record.h"

namespace xprobe::session {

// The filter's parse against `event`'s fields.
probe::filter::FilterResult parse_filter_for(const trace::EventDescription& event, std::string_view text);


class EventFilters {
 public:
  using Filter = std::shared_ptr<const probe::filter::EventFilter>;

  // Sets (or, with "0", clears) the filter of GROUP/EVENT, an event described by `event`.
  // Refused: the error, and the filter in place stays.
  std::optional<probe::filter::FilterError> set(const trace::EventDescription& event, std::string_view text);
  // A live write to the event's filter file, as the kernel takes it: refused, the event is left
  // with no filter at all and the file shows the error (its text, caret and message) until the
  // next write.
  std::optional<probe::filter::FilterError> write_file(const trace::EventDescription& event, std::string_view text);
  // The text given for GROUP/EVENT before the event was described (a definition's `if`,
  // --filter): parsed when the event is planted.
  void set_text(const std::string& group_event, std::string text) { texts_[group_event] = std::move(text); }
  // The filter of an event being planted, parsed from its text if only that is known.
  // Refused: the error (the event then goes in unfiltered: the caller reports it).
  Filter filter_for(const trace::EventDescription& event, std::optional<probe::filter::FilterError>* refused = nullptr);
  // What the kernel's filter file shows: the filter's text, "none", or a refused write's error.
  std::string file_text(const std::string& group_event) const;
  // Called with GROUP/EVENT whenever its filter changes (an engine holding it refreshes).
  void on_change(std::function<void(const std::string& group_event)> callback) { changed_ = std::move(callback); }

 private:
  std::map<std::string, std::string, std::less<>> texts_;
  std::map<std::string, Filter, std::less<>> parsed_;
  std::map<std::string, std::string, std::less<>> refused_;  // a refused write's error block
  std::function<void(const std::string&)> changed_;
};

std::string group_event_of(const trace::EventDescription& event);

}  // namespace xprobe::session
