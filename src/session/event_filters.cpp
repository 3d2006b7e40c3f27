#include "session/event_filters.h"

#include "trace/event_fields.h"

namespace xprobe::session {

std::string group_event_of(const trace::EventDescription& event) { return event.group + "/" + event.event; }

probe::filter::FilterResult parse_filter_for(const trace::EventDescription& event, std::string_view text) {
  return probe::filter::parse_event_filter(text, trace::fields_of(event));
}

std::optional<probe::filter::FilterError> EventFilters::set(const trace::EventDescription& event, std::string_view text) {
  const std::string name = group_event_of(event);
  refused_.erase(name);
  if (probe::filter::clears_filter(text)) {
    texts_.erase(name);
    parsed_.erase(name);
  } else {
    probe::filter::FilterResult result = parse_filter_for(event, text);
    if (!result) return result.error();
    texts_[name] = result.value().text();
    parsed_[name] = std::make_shared<const probe::filter::EventFilter>(std::move(result.value()));
  }
  if (changed_) changed_(name);
  return std::nullopt;
}

std::optional<probe::filter::FilterError> EventFilters::write_file(const trace::EventDescription& event,
                                                                   std::string_view text) {
  std::optional<probe::filter::FilterError> refused = set(event, text);
  if (!refused) return std::nullopt;
  const std::string name = group_event_of(event);
  texts_.erase(name);
  parsed_.erase(name);
  refused_[name] = refused->render();
  if (changed_) changed_(name);
  return refused;
}

EventFilters::Filter EventFilters::filter_for(const trace::EventDescription& event,
                                              std::optional<probe::filter::FilterError>* refused) {
  const std::string name = group_event_of(event);
  if (auto found = parsed_.find(name); found != parsed_.end()) return found->second;
  auto text = texts_.find(name);
  if (text == texts_.end()) return nullptr;
  if (probe::filter::clears_filter(text->second)) return nullptr;
  probe::filter::FilterResult result = parse_filter_for(event, text->second);
  if (!result) {
    if (refused) *refused = result.error();
    return nullptr;
  }
  Filter filter = std::make_shared<const probe::filter::EventFilter>(std::move(result.value()));
  parsed_[name] = filter;
  return filter;
}

std::string EventFilters::file_text(const std::string& group_event) const {
  if (auto refused = refused_.find(group_event); refused != refused_.end()) return refused->second;
  auto text = texts_.find(group_event);
  return text == texts_.end() ? "none" : text->second;
}

}  // namespace xprobe::session
