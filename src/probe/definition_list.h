#pragma once
// The definitions of a session in the order they apply, with the kernel's rules for writing
// one more to uprobe_events:
//   - a definition for an event that exists adds a probe point to that event only when its
//     probe type and every argument (count, names, types) are those of the event, and it is
//     not the very same probe point with the same arguments again (the kernel's
//     DIFF_PROBE_TYPE, DIFF_ARG_TYPE and SAME_PROBE refusals, with its messages and carets);
//   - "-:[GRP/]EVENT" removes every probe point of the event, "-:GRP/" every event of the
//     group, "-:EVENT" the event in whichever group has it, and "-:GRP/EVENT PLACE [ARGS]"
//     only the probe points whose place and first arguments read like those words.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "probe/definition.h"
#include "probe/parse_error.h"

namespace xprobe::probe {

// Whether the Delete `deletion` ("-:[GRP/]EVENT [PLACE [ARGS]]") removes `definition`.
bool deletion_matches(const ProbeDefinition& deletion, const ProbeDefinition& definition);

class DefinitionList {
 public:
  // Adds an entry or return probe, or applies a Delete. A refused definition leaves the list
  // as it was. A Delete that matches nothing is refused ("no such event", errno ENOENT in
  // the kernel, which logs nothing).
  std::optional<ParseError> apply(ProbeDefinition definition);

  const std::vector<ProbeDefinition>& definitions() const { return definitions_; }
  std::vector<ProbeDefinition> take() && { return std::move(definitions_); }

 private:
  std::optional<ParseError> add(ProbeDefinition definition);
  std::optional<ParseError> remove(const ProbeDefinition& deletion);
  void index_all();
  std::vector<ProbeDefinition> definitions_;
  // GRP/EVENT -> the positions of its definitions in definitions_, in order: a new
  // definition is compared only with its event's (10,000 events must not cost 10,000^2/2).
  std::unordered_map<std::string, std::vector<size_t>> by_event_;
};

}  // namespace xprobe::probe
