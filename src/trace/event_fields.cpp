#include "trace/event_fields.h"

namespace xprobe::trace {

std::vector<probe::filter::FilterField> fields_of(const EventDescription& event) {
  return probe::filter::event_fields(event.argument_names, event.argument_types, event.is_return);
}

probe::filter::FilterInputs inputs_of(const EventRecord& record, bool is_return) {
  probe::filter::FilterInputs inputs;
  inputs.values = record.values;
  inputs.tid = record.tid;
  inputs.comm = record.comm;
  inputs.cpu = record.cpu;
  inputs.probe_address = is_return ? record.function_address.value_or(0) : record.address;
  inputs.return_address = is_return ? record.address : 0;
  return inputs;
}

}  // namespace xprobe::trace
