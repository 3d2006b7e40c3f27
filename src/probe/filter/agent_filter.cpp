#include "probe/filter/agent_filter.h"

#include <cstring>

#include "probe/agent/agent_abi.h"

namespace xprobe::probe::filter {

agent::AgentFilterSource argument_source(const FilterField& field, const ProbeFetchPlan& plan) {
  if (field.argument >= plan.arguments.size() || field.argument >= agent::kMaxFilterArguments) return agent::kFilterUnknown;
  const FetchProgram& program = plan.arguments[field.argument];
  if (program.code.empty()) return agent::kFilterUnknown;
  switch (program.code.back().op) {
    case FetchOp::StoreRaw: return field.is_string ? agent::kFilterUnknown : agent::kFilterArgumentValue;
    case FetchOp::StoreMemory: return field.is_string || field.size > 8 ? agent::kFilterUnknown : agent::kFilterArgumentNumber;
    case FetchOp::StoreString:
      return field.is_string && !program.type.is_array() ? agent::kFilterArgumentString : agent::kFilterUnknown;
    default: return agent::kFilterUnknown;
  }
}

std::vector<uint8_t> compile_agent_filter(const EventFilter& filter, const ProbeFetchPlan& plan, uint64_t probe_address) {
  if (filter.predicates().size() > agent::kMaxFilterTerms || filter.program().size() > agent::kMaxFilterSteps) return {};
  std::vector<agent::AgentFilterTerm> terms;
  std::string patterns;
  bool any_decidable = false;
  for (const Predicate& predicate : filter.predicates()) {
    const FilterField& field = filter.fields()[predicate.field];
    agent::AgentFilterTerm term{};
    term.compare = static_cast<uint8_t>(predicate.op);
    term.size = field.size;
    term.flags = static_cast<uint8_t>((field.is_signed ? agent::kFilterSigned : 0) | (predicate.negate ? agent::kFilterNegate : 0));
    term.match = predicate.match;
    term.operand = predicate.number;
    term.argument = static_cast<uint8_t>(field.argument);
    switch (field.source) {
      case FieldSource::Argument:
        term.source = argument_source(field, plan);
        if (field.type.kind == TypeKind::Bitfield) {
          term.bit_width = field.type.bit_width;
          term.bit_offset = field.type.bit_offset;
        }
        break;
      case FieldSource::Cpu: term.source = agent::kFilterCpu; break;
      case FieldSource::ReturnAddress: term.source = agent::kFilterReturnAddress; break;
      case FieldSource::ProbeAddress:
      case FieldSource::Zero: {
        FilterInputs known;
        known.probe_address = probe_address;
        term.source = filter.predicate_holds(predicate, known) ? agent::kFilterTrue : agent::kFilterFalse;
        break;
      }
      case FieldSource::ThreadId:
      case FieldSource::Comm: term.source = agent::kFilterUnknown; break;
    }
    if (term.source == agent::kFilterArgumentString) {
      term.pattern_offset = static_cast<uint32_t>(patterns.size());  // made absolute below
      term.pattern_length = static_cast<uint32_t>(predicate.pattern.size());
      patterns += predicate.pattern;
    }
    any_decidable = any_decidable || term.source != agent::kFilterUnknown;
    terms.push_back(term);
  }
  if (!any_decidable) return {};
  const size_t steps_at = sizeof(agent::AgentFilter) + terms.size() * sizeof(agent::AgentFilterTerm);
  const size_t patterns_at = steps_at + filter.program().size() * sizeof(uint16_t);
  for (agent::AgentFilterTerm& term : terms)
    if (term.source == agent::kFilterArgumentString) term.pattern_offset += static_cast<uint32_t>(patterns_at);
  std::vector<uint8_t> bytes(patterns_at + patterns.size());
  const agent::AgentFilter head{static_cast<uint32_t>(terms.size()), static_cast<uint32_t>(filter.program().size())};
  std::memcpy(bytes.data(), &head, sizeof head);
  std::memcpy(bytes.data() + sizeof head, terms.data(), terms.size() * sizeof(agent::AgentFilterTerm));
  for (size_t i = 0; i < filter.program().size(); ++i) {
    const FilterStep& step = filter.program()[i];
    uint16_t kind = agent::kStepTest;
    switch (step.kind) {
      case FilterStep::Kind::Test: kind = agent::kStepTest; break;
      case FilterStep::Kind::And: kind = agent::kStepAnd; break;
      case FilterStep::Kind::Or: kind = agent::kStepOr; break;
      case FilterStep::Kind::Not: kind = agent::kStepNot; break;
    }
    const uint16_t word = static_cast<uint16_t>(kind << 8 | (step.kind == FilterStep::Kind::Test ? step.predicate : 0));
    std::memcpy(bytes.data() + steps_at + 2 * i, &word, 2);
  }
  std::memcpy(bytes.data() + patterns_at, patterns.data(), patterns.size());
  return bytes;
}

}  // namespace xprobe::probe::filter
