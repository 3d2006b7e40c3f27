#pragma once
// JSON lines: one object per event, for machines. Numbers of u/s/bitfield types are JSON
// numbers, x types "0x.." strings, char a one-character string, strings strings (null when
// they faulted), symbol its text, arrays JSON arrays. Bytes that are not UTF-8 are
// escaped as \u00XX so every line is valid JSON.
//
//   {"event":"uprobes/xpt","tid":9559,"comm":"t","cpu":1,"timestamp_ns":441094151000,
//    "address":"0x55ef9f203149","args":{"a":5,"s":"x"}}
// Return probes add "function":"0x..."; faulting arguments are listed in "faults":["name"].
#include <memory>
#include <string>
#include <string_view>

#include "trace/event_record.h"
#include "trace/output_format.h"
#include "trace/value_format.h"

namespace xprobe::trace {

std::string format_json_event(const EventRecord& record, const EventCatalog& catalog,
                              const Symbolizer& symbolizer = {});

std::string json_quote(std::string_view text);
// One argument's value as this format writes it (a number, a string, null, an array); the
// Trace Event Format writer puts the same values in its "args".
std::string json_value(const probe::FetchedValue& value, const Symbolizer& symbolizer = {});

// The "json" output format (output_format.h): no header, one line per event.
std::unique_ptr<EventWriter> make_json_writer(const FormatContext& context);

}  // namespace xprobe::trace
