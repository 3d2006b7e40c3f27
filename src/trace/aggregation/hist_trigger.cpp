#include "trace/aggregation/hist_trigger.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "support/split.h"
#include "trace/event_fields.h"

namespace xprobe::trace {
namespace {

using probe::filter::FilterField;

std::optional<uint64_t> number_in(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

const char* modifier_suffix(const HistField& field) {
  switch (field.modifier) {
    case HistField::Modifier::Hex: return ".hex";
    case HistField::Modifier::Sym: return ".sym";
    case HistField::Modifier::SymOffset: return ".sym-offset";
    case HistField::Modifier::Execname: return ".execname";
    case HistField::Modifier::Log2: return ".log2";
    case HistField::Modifier::Buckets: return ".buckets";
    case HistField::Modifier::Percent: return ".percent";
    case HistField::Modifier::Graph: return ".graph";
    case HistField::Modifier::None: return "";
  }
  return "";
}

std::string field_text(const HistField& field) {
  std::string out = field.name + modifier_suffix(field);
  if (field.modifier == HistField::Modifier::Buckets) out += fmt::format("={}", field.buckets);
  return out;
}

Result<HistField> parse_field(std::string_view text, const std::vector<FilterField>& fields, bool is_key,
                              std::string_view trigger) {
  HistField out;
  std::string_view name = text;
  std::string_view modifier;
  if (const size_t dot = text.find('.'); dot != std::string_view::npos) {
    name = text.substr(0, dot);
    modifier = text.substr(dot + 1);
  }
  if (name == "common_stacktrace" || name == "stacktrace") {
    if (!is_key) return make_error(fmt::format("'{}': {} is a key, not a value", trigger, name));
    if (!modifier.empty()) return make_error(fmt::format("'{}': Invalid field modifier: {}", trigger, text));
    out.name = "common_stacktrace";
    out.stacktrace = true;
    return out;
  }
  const FilterField* field = probe::filter::find_field(fields, name);
  if (field == nullptr)
    return make_error(fmt::format("'{}': Couldn't find field: {}", trigger, name));
  out.name = std::string(name);
  out.field = *field;
  if (modifier.empty()) {
  } else if (modifier == "hex") {
    out.modifier = HistField::Modifier::Hex;
  } else if (is_key && modifier == "sym") {
    out.modifier = HistField::Modifier::Sym;
  } else if (is_key && modifier == "sym-offset") {
    out.modifier = HistField::Modifier::SymOffset;
  } else if (is_key && modifier == "execname" && name == "common_pid") {
    out.modifier = HistField::Modifier::Execname;
  } else if (is_key && modifier == "log2") {
    out.modifier = HistField::Modifier::Log2;
  } else if (!is_key && modifier == "percent") {
    out.modifier = HistField::Modifier::Percent;
  } else if (!is_key && modifier == "graph") {
    out.modifier = HistField::Modifier::Graph;
  } else if (is_key && modifier.starts_with("buckets=")) {
    const auto buckets = number_in(modifier.substr(8));
    if (!buckets || *buckets == 0) return make_error(fmt::format("'{}': Invalid bucket size: {}", trigger, text));
    out.modifier = HistField::Modifier::Buckets;
    out.buckets = *buckets;
  } else {
    return make_error(fmt::format("'{}': Invalid field modifier: {}", trigger, text));
  }
  if (out.field.is_string && out.modifier != HistField::Modifier::None)
    return make_error(fmt::format("'{}': Invalid field modifier for a string: {}", trigger, text));
  if (!is_key && out.field.is_string) return make_error(fmt::format("'{}': Invalid value (a string): {}", trigger, name));
  return out;
}

uint64_t ilog2_roundup(uint64_t value) {
  // The kernel's ilog2(roundup_pow_of_two(value)).
  if (value <= 1) return 0;
  return 64 - static_cast<uint64_t>(std::countl_zero(value - 1));
}

}  // namespace

std::string HistSpec::describe() const {
  std::string out = "hist:keys=";
  for (size_t i = 0; i < keys.size(); ++i) out += (i ? "," : "") + field_text(keys[i]);
  out += ":vals=";
  bool listed = !no_hitcount;
  if (!no_hitcount) out += "hitcount";
  for (const HistField& value : vals) {
    out += (listed ? "," : "") + field_text(value);
    listed = true;
  }
  out += ":sort=";
  for (size_t i = 0; i < sort.size(); ++i) out += (i ? "," : "") + sort[i].name + (sort[i].descending ? ".descending" : "");
  out += fmt::format(":size={}", std::bit_ceil(size));
  if (no_hitcount) out += ":nohitcount";
  if (!filter.empty()) out += " if " + filter;
  out += paused ? " [paused]" : " [active]";
  return out;
}

bool HistSpec::same_trigger(const HistSpec& other) const {
  auto same_fields = [](const std::vector<HistField>& a, const std::vector<HistField>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].name != b[i].name || a[i].modifier != b[i].modifier || a[i].buckets != b[i].buckets) return false;
    return true;
  };
  if (!same_fields(keys, other.keys) || !same_fields(vals, other.vals) || filter != other.filter) return false;
  if (sort.size() != other.sort.size()) return false;
  for (size_t i = 0; i < sort.size(); ++i)
    if (sort[i].name != other.sort[i].name || sort[i].descending != other.sort[i].descending) return false;
  return true;
}

Result<HistSpec> parse_hist_trigger(std::string_view text, const EventDescription& event) {
  const std::string whole(text);
  std::string_view trigger = text;
  HistSpec spec;
  if (const size_t at = trigger.find(" if "); at != std::string_view::npos) {
    spec.filter = std::string(trigger.substr(at + 4));
    trigger = trigger.substr(0, at);
  }
  if (!trigger.starts_with("hist:")) return make_error(fmt::format("'{}': a hist trigger starts with 'hist:'", whole));
  const std::vector<FilterField> fields = fields_of(event);
  for (std::string_view part : split(trigger.substr(5), ':')) {
    if (part.empty()) continue;
    const size_t equals = part.find('=');
    const std::string_view key = part.substr(0, equals);
    const std::string_view value = equals == std::string_view::npos ? std::string_view{} : part.substr(equals + 1);
    if (key == "keys" || key == "key") {
      for (std::string_view name : split(value, ',')) {
        auto field = parse_field(name, fields, true, whole);
        if (!field) return field.error();
        spec.keys.push_back(std::move(*field));
      }
    } else if (key == "vals" || key == "values") {
      for (std::string_view name : split(value, ',')) {
        if (name == "hitcount") continue;
        if (name == "hitcount.percent" || name == "hitcount.graph") {
          spec.hitcount_modifier = name.ends_with("percent") ? HistField::Modifier::Percent : HistField::Modifier::Graph;
          continue;
        }
        auto field = parse_field(name, fields, false, whole);
        if (!field) return field.error();
        spec.vals.push_back(std::move(*field));
      }
    } else if (key == "sort") {
      // As the kernel's create_sort_keys(): at most two, each NAME[.descending|.ascending].
      const std::vector<std::string_view> names = split(value, ',');
      if (names.size() > 2) return make_error(fmt::format("'{}': Too many sort fields (Max = 2)", whole));
      for (std::string_view name : names) {
        HistSortKey sort;
        std::string_view modifier;
        if (const size_t dot = name.find('.'); dot != std::string_view::npos) {
          modifier = name.substr(dot + 1);
          name = name.substr(0, dot);
        }
        if (name.empty()) return make_error(fmt::format("'{}': Empty sort field", whole));
        if (modifier == "descending") sort.descending = true;
        else if (!modifier.empty() && modifier != "ascending")
          return make_error(fmt::format("'{}': Invalid sort modifier: {}", whole, modifier));
        if (name == "stacktrace") name = "common_stacktrace";
        bool known = name == "hitcount";
        for (const HistField& f : spec.keys) known = known || f.name == name;
        for (const HistField& f : spec.vals) known = known || f.name == name;
        if (!known) return make_error(fmt::format("'{}': Sort field must be a key or a val: {}", whole, name));
        sort.name = std::string(name);
        spec.sort.push_back(std::move(sort));
      }
    } else if (key == "size") {
      const auto size = number_in(value);
      if (!size || *size == 0 || *size > (1u << 17)) return make_error(fmt::format("'{}': Invalid size: {}", whole, value));
      spec.size = static_cast<unsigned>(*size);
    } else if (part == "pause" || part == "paused") {
      spec.paused = true;
      spec.command = HistSpec::Command::Pause;
    } else if (part == "cont" || part == "continue") {
      spec.command = HistSpec::Command::Cont;
    } else if (part == "clear") {
      spec.command = HistSpec::Command::Clear;
    } else if (part == "nohitcount" || part == "NOHC") {
      spec.no_hitcount = true;
    } else if (key == "name") {
    } else {
      return make_error(fmt::format("'{}': Unknown hist parameter: {}", whole, part));
    }
  }
  if (spec.keys.empty()) return make_error(fmt::format("'{}': No keys given (hist:keys=FIELD)", whole));
  if (spec.no_hitcount && spec.vals.empty())
    return make_error(fmt::format("'{}': Non-hitcount value is required for 'nohitcount'", whole));
  if (spec.sort.empty()) spec.sort.push_back({"hitcount", false});
  if (!spec.filter.empty()) {
    auto filter = probe::filter::parse_event_filter(spec.filter, fields);
    if (!filter) return make_error(fmt::format("'{}': the filter is refused:\n{}", whole, filter.error().render()));
  }
  return spec;
}

bool HistTable::needs_stack() const {
  for (const HistField& key : spec_.keys)
    if (key.stacktrace) return true;
  return false;
}

HistTable::HistTable(HistSpec spec, const EventDescription& event) : spec_(std::move(spec)) {
  if (spec_.filter.empty()) return;
  auto filter = probe::filter::parse_event_filter(spec_.filter, fields_of(event));
  if (filter) filter_.emplace(std::move(filter.value()));  // parse_hist_trigger checked it
}

void HistTable::clear() {
  entries_.clear();
  hits_ = 0;
  dropped_ = 0;
}

void HistTable::add(const EventRecord& record, bool is_return) {
  if (spec_.paused) return;
  const probe::filter::FilterInputs inputs = inputs_of(record, is_return);
  if (filter_ && !filter_->matches(inputs)) return;
  std::vector<KeyPart> key;
  for (const HistField& field : spec_.keys) {
    const probe::filter::FieldValue value =
        field.stacktrace ? probe::filter::FieldValue{} : probe::filter::field_value(field.field, inputs);
    KeyPart part;
    if (field.stacktrace) part.frames = record.user_stack;
    else if (value.is_string) part.text = std::string(value.text);
    else if (field.modifier == HistField::Modifier::Log2) part.number = ilog2_roundup(value.number);
    else if (field.modifier == HistField::Modifier::Buckets) part.number = value.number / field.buckets * field.buckets;
    else part.number = value.number;
    key.push_back(std::move(part));
  }
  auto found = entries_.find(key);
  if (found == entries_.end()) {
    if (entries_.size() >= std::bit_ceil(spec_.size)) {
      ++dropped_;
      return;
    }
    Entry entry;
    entry.sums.assign(spec_.vals.size(), 0);
    for (const HistField& field : spec_.keys)
      entry.execnames.push_back(field.modifier == HistField::Modifier::Execname ? record.comm : std::string());
    found = entries_.emplace(std::move(key), std::move(entry)).first;
  }
  ++hits_;
  ++found->second.hitcount;
  for (size_t i = 0; i < spec_.vals.size(); ++i)
    found->second.sums[i] += probe::filter::field_value(spec_.vals[i].field, inputs).number;
}

void HistTable::add_aggregated(const probe::AggregationUpdate& update) {
  if (spec_.paused) return;  // a live :pause (the tables were taken just before it)
  dropped_ += update.dropped;
  for (const probe::AggregatedEntry& aggregated : update.entries) {
    std::vector<KeyPart> key;
    size_t word = 0;
    for (const HistField& field : spec_.keys) {
      KeyPart part;
      if (field.field.is_string) {
        char text[agent::kAggStringBytes + 1] = {};
        std::memcpy(text, &aggregated.key[word], agent::kAggStringBytes);
        part.text = text;
        word += agent::kAggStringBytes / 8;
      } else {
        part.number = word < agent::kAggKeyWords ? aggregated.key[word] : 0;
        ++word;
      }
      key.push_back(std::move(part));
    }
    auto found = entries_.find(key);
    if (found == entries_.end()) {
      // Records the tracer aggregated may have taken the room first.
      if (entries_.size() >= std::bit_ceil(spec_.size)) {
        dropped_ += aggregated.hitcount;
        continue;
      }
      Entry entry;
      entry.sums.assign(spec_.vals.size(), 0);
      entry.execnames.assign(spec_.keys.size(), std::string());
      found = entries_.emplace(std::move(key), std::move(entry)).first;
    }
    hits_ += aggregated.hitcount;
    found->second.hitcount += aggregated.hitcount;
    for (size_t i = 0; i < spec_.vals.size() && i < agent::kMaxAggValues; ++i) found->second.sums[i] += aggregated.values[i];
  }
}

std::string HistTable::format(const Symbolize& symbolize) const {
  std::string out = "# event histogram\n#\n# trigger info: " + spec_.describe() + "\n#\n\n";
  using Item = std::pair<const std::vector<KeyPart>*, const Entry*>;
  std::vector<Item> items;
  for (const auto& [key, entry] : entries_) items.emplace_back(&key, &entry);
  // The value a sort key names in an entry: its key part or its sum (numbers), or its text.
  auto sort_value = [&](const Item& item, const HistSortKey& sort) -> KeyPart {
    if (sort.name == "hitcount") return {item.second->hitcount, {}, {}};
    for (size_t i = 0; i < spec_.keys.size(); ++i)
      if (spec_.keys[i].name == sort.name) return (*item.first)[i];
    for (size_t i = 0; i < spec_.vals.size(); ++i)
      if (spec_.vals[i].name == sort.name) return {item.second->sums[i], {}, {}};
    return {};
  };
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    for (const HistSortKey& sort : spec_.sort) {
      const KeyPart x = sort_value(a, sort), y = sort_value(b, sort);
      if (x == y) continue;
      return sort.descending ? y < x : x < y;
    }
    return false;  // equal on every sort key: in key order
  });
  // .percent and .graph are against the total and the largest of each value (0: hitcount).
  std::vector<uint64_t> totals(spec_.vals.size() + 1, 0), largest(spec_.vals.size() + 1, 0);
  for (const Item& item : items) {
    for (size_t i = 0; i <= spec_.vals.size(); ++i) {
      const uint64_t value = i == 0 ? item.second->hitcount : item.second->sums[i - 1];
      totals[i] += value;
      largest[i] = std::max(largest[i], value);
    }
  }
  // The kernel's __get_percentage(): hundredths of a percent, UINT_MAX for an error.
  auto percentage = [](uint64_t value, uint64_t total) -> uint64_t {
    if (total == 0) return value != 0 ? UINT32_MAX : 0;
    if (value < UINT64_MAX / 10000) return value * 10000 / total;
    total /= 10000;
    if (total == 0) return value != 0 ? UINT32_MAX : 0;
    return value / total;
  };
  auto value_text = [&](const std::string& name, HistField::Modifier modifier, uint64_t value, size_t index) {
    switch (modifier) {
      case HistField::Modifier::Percent: {
        const uint64_t pc = percentage(value, totals[index]);
        if (pc == UINT32_MAX) return fmt::format(" {} (%):[ERROR]", name);
        return fmt::format(" {} (%): {:>3}.{:02}", name, pc / 100, pc % 100);
      }
      case HistField::Modifier::Graph: {
        const uint64_t pc = percentage(value, largest[index]);
        if (pc == UINT32_MAX) return fmt::format(" {}: {:>20}", name, "[ERROR]");
        return fmt::format(" {}: {:<20}", name, std::string(std::min<uint64_t>(20, pc * 20 / 10000), '#'));
      }
      case HistField::Modifier::Hex: return fmt::format(" {}: {:>10x}", name, value);
      default: return fmt::format(" {}: {:>10}", name, value);
    }
  };
  for (const Item& item : items) {
    std::string line = "{ ";
    bool multiline = false;  // a stack key: its frames on lines of their own, then "}" at the start of one
    for (size_t i = 0; i < spec_.keys.size(); ++i) {
      const HistField& field = spec_.keys[i];
      const KeyPart& part = (*item.first)[i];
      if (i > 0) line += ", ";
      if (field.stacktrace) {
        // The kernel's hist_trigger_stacktrace_print(): each frame as %pS after 9 spaces, up
        // to the first empty one.
        line += "common_stacktrace:\n";
        for (uint64_t frame : part.frames) {
          if (frame == 0) break;
          line += fmt::format("{:9}{}\n", "", symbolize(frame, true));
        }
        multiline = true;
        continue;
      }
      if (field.field.is_string) {
        line += fmt::format("{}: {:<50}", field.name, part.text);
        continue;
      }
      switch (field.modifier) {
        case HistField::Modifier::Hex: line += fmt::format("{}: {:x}", field.name, part.number); break;
        case HistField::Modifier::Sym:
          line += fmt::format("{}: [{:x}] {:<45}", field.name, part.number, symbolize(part.number, false));
          break;
        case HistField::Modifier::SymOffset:
          line += fmt::format("{}: [{:x}] {:<55}", field.name, part.number, symbolize(part.number, true));
          break;
        case HistField::Modifier::Execname:
          line += fmt::format("{}: {:<16}[{:>10}]", field.name, item.second->execnames[i], part.number);
          break;
        case HistField::Modifier::Log2: line += fmt::format("{}: ~ 2^{:<2}", field.name, part.number); break;
        case HistField::Modifier::Buckets:
          line += fmt::format("{}: ~ {}-{}", field.name, part.number, part.number + field.buckets - 1);
          break;
        case HistField::Modifier::Percent:  // values only
        case HistField::Modifier::Graph:
        case HistField::Modifier::None: line += fmt::format("{}: {:>10}", field.name, part.number); break;
      }
    }
    line += multiline ? "}" : " }";
    if (!spec_.no_hitcount) line += value_text("hitcount", spec_.hitcount_modifier, item.second->hitcount, 0);
    for (size_t i = 0; i < spec_.vals.size(); ++i)
      line += " " + value_text(spec_.vals[i].name, spec_.vals[i].modifier, item.second->sums[i], i + 1);
    out += line + "\n";
  }
  out += fmt::format("\nTotals:\n    Hits: {}\n    Entries: {}\n    Dropped: {}\n", hits_, entries_.size(), dropped_);
  return out;
}

std::vector<CounterSample> HistTable::counters(const std::string& name, const Symbolize& symbolize) const {
  std::vector<CounterSample> out;
  for (const auto& [key, entry] : entries_) {
    std::string series;
    for (size_t i = 0; i < spec_.keys.size(); ++i) {
      const HistField& field = spec_.keys[i];
      const KeyPart& part = key[i];
      if (i > 0) series += ",";
      series += field.name + "=";
      if (field.stacktrace) {
        for (size_t f = 0; f < part.frames.size(); ++f) series += (f ? "<" : "") + symbolize(part.frames[f], true);
        continue;
      }
      if (field.field.is_string) {
        series += part.text;
        continue;
      }
      switch (field.modifier) {
        case HistField::Modifier::Hex: series += fmt::format("{:#x}", part.number); break;
        case HistField::Modifier::Sym: series += symbolize(part.number, false); break;
        case HistField::Modifier::SymOffset: series += symbolize(part.number, true); break;
        case HistField::Modifier::Execname: series += fmt::format("{}[{}]", entry.execnames[i], part.number); break;
        case HistField::Modifier::Log2: series += fmt::format("2^{}", part.number); break;
        case HistField::Modifier::Buckets: series += fmt::format("{}-{}", part.number, part.number + field.buckets - 1); break;
        default: series += fmt::format("{}", part.number); break;
      }
    }
    if (!spec_.no_hitcount) out.push_back({name + " hitcount", series, static_cast<int64_t>(entry.hitcount)});
    for (size_t v = 0; v < spec_.vals.size(); ++v)
      out.push_back({name + " " + spec_.vals[v].name, series, static_cast<int64_t>(entry.sums[v])});
  }
  return out;
}

}  // namespace xprobe::trace
