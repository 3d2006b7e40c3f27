#include "trace/event_record.h"

namespace xprobe::trace {

EventDescription describe_event(const probe::ProbeDefinition& definition, std::string binary_path) {
  EventDescription description;
  description.group = definition.group;
  description.event = definition.event;
  description.binary = binary_path.empty() ? definition.place.binary : std::move(binary_path);
  description.is_return = definition.kind == probe::ProbeKind::Return;
  for (const probe::ProbeArgument& argument : definition.arguments) {
    description.argument_names.push_back(argument.name);
    description.argument_types.push_back(argument.type);
  }
  return description;
}

}  // namespace xprobe::trace
