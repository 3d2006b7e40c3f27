#include "trace/aggregation/agent_aggregation.h"

#include <bit>
#include <cstring>

#include "probe/filter/agent_filter.h"
#include "trace/event_fields.h"

namespace xprobe::trace {
namespace {

using probe::filter::FieldSource;
using probe::filter::FilterField;

constexpr uint32_t kSummaryEntries = 8192;

// A number field as the agent reads it, or none.
std::optional<agent::AgentAggValue> number_part(const FilterField& field, const probe::ProbeFetchPlan& plan,
                                                uint64_t probe_address) {
  agent::AgentAggValue part{};
  part.size = field.size;
  part.flags = field.is_signed ? agent::kFilterSigned : 0;
  part.argument = static_cast<uint8_t>(field.argument);
  switch (field.source) {
    case FieldSource::Argument:
      part.source = probe::filter::argument_source(field, plan);
      if (part.source != agent::kFilterArgumentValue && part.source != agent::kFilterArgumentNumber) return std::nullopt;
      if (field.type.kind == probe::TypeKind::Bitfield) {
        part.bit_width = field.type.bit_width;
        part.bit_offset = field.type.bit_offset;
      }
      break;
    case FieldSource::Cpu: part.source = agent::kFilterCpu; break;
    case FieldSource::ReturnAddress: part.source = agent::kFilterReturnAddress; break;
    case FieldSource::ProbeAddress:
      part.source = agent::kFilterConstant;
      part.operand = static_cast<int64_t>(agent::number_at_size(probe_address, field.size, field.is_signed));
      break;
    case FieldSource::Zero: part.source = agent::kFilterConstant; break;
    case FieldSource::ThreadId:  // the agent's gettid() may be another pid namespace's
    case FieldSource::Comm: return std::nullopt;
  }
  if (field.argument >= agent::kMaxFilterArguments) return std::nullopt;
  return part;
}

std::optional<agent::AgentAggValue> key_part(const FilterField& field, const probe::ProbeFetchPlan& plan, uint64_t probe_address) {
  if (!field.is_string) return number_part(field, plan, probe_address);
  if (field.source != FieldSource::Argument || field.argument >= agent::kMaxFilterArguments ||
      probe::filter::argument_source(field, plan) != agent::kFilterArgumentString)
    return std::nullopt;
  agent::AgentAggValue part{};
  part.source = agent::kFilterArgumentString;
  part.flags = agent::kAggString;
  part.argument = static_cast<uint8_t>(field.argument);
  return part;
}

uint32_t key_words(const std::vector<agent::AgentAggValue>& keys) {
  uint32_t words = 0;
  for (const agent::AgentAggValue& key : keys) words += (key.flags & agent::kAggString) ? agent::kAggStringBytes / 8 : 1;
  return words;
}

// A filter false for every hit: a paused trigger aggregates nothing.
std::vector<uint8_t> never() {
  std::vector<uint8_t> bytes(sizeof(agent::AgentFilter) + sizeof(agent::AgentFilterTerm) + 2, 0);
  const agent::AgentFilter head{1, 1};
  agent::AgentFilterTerm term{};
  term.source = agent::kFilterFalse;
  const uint16_t step = agent::kStepTest << 8;
  std::memcpy(bytes.data(), &head, sizeof head);
  std::memcpy(bytes.data() + sizeof head, &term, sizeof term);
  std::memcpy(bytes.data() + sizeof head + sizeof term, &step, 2);
  return bytes;
}

}  // namespace

std::optional<probe::AgentAggregationSpec> agent_aggregation_of(const HistSpec& spec, const EventDescription& event,
                                                                const probe::ProbeFetchPlan& plan, uint64_t probe_address) {
  probe::AgentAggregationSpec out;
  out.max_entries = std::bit_ceil(spec.size);
  if (spec.keys.size() > agent::kMaxAggKeys || spec.vals.size() > agent::kMaxAggValues || out.max_entries > agent::kMaxAggEntries)
    return std::nullopt;
  for (const HistField& key : spec.keys) {
    // The agent does not walk stacks (trace/aggregation/agent_aggregation.h).
    if (key.modifier == HistField::Modifier::Execname || key.stacktrace) return std::nullopt;
    auto part = key_part(key.field, plan, probe_address);
    if (!part) return std::nullopt;
    if (key.modifier == HistField::Modifier::Log2) part->transform = agent::kTransformLog2Roundup;
    if (key.modifier == HistField::Modifier::Buckets) {
      part->transform = agent::kTransformBuckets;
      part->parameters[0] = static_cast<int64_t>(key.buckets);
    }
    out.keys.push_back(*part);
  }
  if (key_words(out.keys) > agent::kAggKeyWords) return std::nullopt;
  for (const HistField& value : spec.vals) {
    auto part = number_part(value.field, plan, probe_address);
    if (!part) return std::nullopt;
    part->fold = agent::kFoldSum;
    out.values.push_back(*part);
  }
  if (spec.paused) {
    out.filter = never();
  } else if (!spec.filter.empty()) {
    auto filter = probe::filter::parse_event_filter(spec.filter, fields_of(event));
    if (!filter) return std::nullopt;
    out.filter = probe::filter::compile_agent_filter(filter.value(), plan, probe_address);
    if (out.filter.empty()) return std::nullopt;  // nothing the agent could decide
  }
  return out;
}

std::optional<probe::AgentAggregationSpec> agent_aggregation_of(const SummarySpec& spec, const probe::ProbeFetchPlan& plan,
                                                                uint64_t probe_address,
                                                                std::optional<uint32_t> entry_clock_slot) {
  probe::AgentAggregationSpec out;
  out.max_entries = kSummaryEntries;
  if (spec.key) {
    auto part = key_part(*spec.key, plan, probe_address);
    if (!part) return std::nullopt;
    out.keys.push_back(*part);
  }
  // What is measured: a field, or the call's duration.
  agent::AgentAggValue measured{};
  if (spec.kind == SummaryKind::Latency) {
    if (!entry_clock_slot) return std::nullopt;
    measured.source = agent::kFilterLatency;
    measured.operand = *entry_clock_slot;
  } else if (spec.field) {
    auto part = number_part(*spec.field, plan, probe_address);
    if (!part) return std::nullopt;
    measured = *part;
  }
  const bool measures = spec.kind == SummaryKind::Latency || spec.field.has_value();
  // The bucket is one more key part.
  agent::AgentAggValue bucket = measured;
  switch (spec.kind) {
    case SummaryKind::Hist: bucket.transform = agent::kTransformHistBucket; break;
    case SummaryKind::Lhist:
      bucket.transform = agent::kTransformLinearBucket;
      bucket.parameters[0] = spec.min;
      bucket.parameters[1] = spec.max;
      bucket.parameters[2] = spec.step;
      break;
    case SummaryKind::Latency: bucket.transform = agent::kTransformLatencyBucket; break;
    default: break;
  }
  if (bucket.transform != agent::kTransformNone) out.keys.push_back(bucket);
  if (key_words(out.keys) > agent::kAggKeyWords) return std::nullopt;
  if (measures) {
    measured.fold = agent::kFoldSum;
    out.values.push_back(measured);
    if (spec.kind == SummaryKind::Min || spec.kind == SummaryKind::Max) {
      measured.fold = agent::kFoldMin;
      out.values.push_back(measured);
      measured.fold = agent::kFoldMax;
      out.values.push_back(measured);
    }
  }
  return out;
}

}  // namespace xprobe::trace
