#include "probe/definition_list.h"

#include <fmt/format.h>

#include <algorithm>

#include "probe/definition_text.h"
#include "probe/kernel_messages.h"

namespace xprobe::probe {
namespace {

std::string event_key(const ProbeDefinition& definition) { return definition.group + "/" + definition.event; }

// Where word `index` of a definition's command starts (0: the head, 1: the place, 2...: the
// arguments; the command's words are joined by single spaces). For a word the command does
// not have, its end, where the kernel's error_log puts such a caret.
size_t word_column(const ProbeDefinition& definition, size_t index) {
  size_t column = 0;
  for (size_t i = 0; i < index; ++i) {
    const size_t space = definition.command.find(' ', column);
    if (space == std::string::npos) return definition.command.size() + 1;
    column = space + 1;
  }
  return column;
}

// The kernel's trace_probe_compare_arg_type(): 0 when the arguments agree in count, names,
// types and array lengths, else the 1-based position of the first that does not (count+1
// when one side has more).
size_t first_different_argument(const ProbeDefinition& incoming, const ProbeDefinition& existing) {
  const auto& a = incoming.arguments;
  const auto& b = existing.arguments;
  if (a.size() != b.size()) return std::min(a.size(), b.size()) + 1;
  for (size_t i = 0; i < a.size(); ++i) {
    FetchType ta = a[i].type;
    FetchType tb = b[i].type;
    // A bitfield's type is its container's (the kernel compares fetch_type pointers).
    ta.bit_width = tb.bit_width = 0;
    ta.bit_offset = tb.bit_offset = 0;
    if (a[i].name != b[i].name || !(ta == tb)) return i + 1;
  }
  return 0;
}

bool same_probe_point(const ProbeDefinition& a, const ProbeDefinition& b) {
  if (to_uprobe_events_place(a.place) != to_uprobe_events_place(b.place)) return false;
  for (size_t i = 0; i < a.arguments.size(); ++i) {
    if (to_uprobe_events_argument(a.arguments[i]) != to_uprobe_events_argument(b.arguments[i])) return false;
  }
  return true;
}

// The kernel's trace_uprobe_match_command_head() and trace_probe_match_command_args().
bool matches_delete_words(const ProbeDefinition& definition, const std::vector<std::string>& words) {
  if (words.empty()) return true;
  if (words[0] != to_uprobe_events_place(definition.place) && words[0] != definition.place.text) return false;
  if (words.size() - 1 > definition.arguments.size()) return false;
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] != to_uprobe_events_argument(definition.arguments[i - 1])) return false;
  }
  return true;
}

}  // namespace

bool deletion_matches(const ProbeDefinition& deletion, const ProbeDefinition& d) {
  if (deletion.group_given && d.group != deletion.group) return false;
  if (!deletion.event.empty() && d.event != deletion.event) return false;
  return matches_delete_words(d, deletion.delete_match);
}

std::optional<ParseError> DefinitionList::apply(ProbeDefinition definition) {
  if (definition.kind == ProbeKind::Delete) return remove(definition);
  return add(std::move(definition));
}

std::optional<ParseError> DefinitionList::add(ProbeDefinition definition) {
  // A glob without a name names one event per match, decided later: nothing to compare yet.
  std::vector<size_t>* same_event = nullptr;
  if (!definition.event.empty()) {
    same_event = &by_event_[event_key(definition)];
    for (size_t position : *same_event) {
      const ProbeDefinition& existing = definitions_[position];
      if (existing.kind != definition.kind) {
        return parse_error_at(definition.command, word_column(definition, 0), msg::kDiffProbeType);
      }
      if (const size_t different = first_different_argument(definition, existing)) {
        return parse_error_at(definition.command, word_column(definition, different + 1), msg::kDiffArgType);
      }
      if (same_probe_point(existing, definition)) {
        return parse_error_at(definition.command, word_column(definition, 0), msg::kSameProbe);
      }
    }
  }
  if (same_event != nullptr) same_event->push_back(definitions_.size());
  definitions_.push_back(std::move(definition));
  return std::nullopt;
}

void DefinitionList::index_all() {
  by_event_.clear();
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (!definitions_[i].event.empty()) by_event_[event_key(definitions_[i])].push_back(i);
}

std::optional<ParseError> DefinitionList::remove(const ProbeDefinition& deletion) {
  const size_t before = definitions_.size();
  std::erase_if(definitions_, [&](const ProbeDefinition& d) { return deletion_matches(deletion, d); });
  if (definitions_.size() != before) {
    index_all();  // positions moved
    return std::nullopt;
  }
  const std::string what = deletion.event.empty() ? fmt::format("events of group {}", deletion.group)
                                                  : fmt::format("definition of {}{}", deletion.group_given
                                                                                          ? deletion.group + "/"
                                                                                          : std::string(),
                                                                deletion.event);
  return parse_error_at(deletion.command, 0,
                        fmt::format("no earlier {}{} to delete", what,
                                    deletion.delete_match.empty() ? "" : " at this place"));
}

}  // namespace xprobe::probe
