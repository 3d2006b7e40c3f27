#pragma once
// An event's fields as filters and aggregations name them (probe/filter's event_fields for its
// description), and the values they read in one of its events.
#include <vector>

#include "probe/filter/event_filter.h"
#include "trace/event_record.h"

namespace xprobe::trace {

std::vector<probe::filter::FilterField> fields_of(const EventDescription& event);
// `record` keeps the values it points to.
probe::filter::FilterInputs inputs_of(const EventRecord& record, bool is_return);

}  // namespace xprobe::trace
