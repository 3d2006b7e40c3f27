#include "trace/aggregation/summaries.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "support/split.h"
#include "trace/event_fields.h"

namespace xprobe::trace {
namespace {

std::optional<int64_t> integer_in(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

const char* option_of(SummaryKind kind) {
  switch (kind) {
    case SummaryKind::Count: return "--count";
    case SummaryKind::Hist: return "--hist";
    case SummaryKind::Lhist: return "--lhist";
    case SummaryKind::Sum: return "--sum";
    case SummaryKind::Avg: return "--avg";
    case SummaryKind::Min: return "--min";
    case SummaryKind::Max: return "--max";
    case SummaryKind::Latency: return "--latency";
  }
  return "";
}

int64_t signed_value(const probe::filter::FilterField& field, uint64_t number) {
  return field.is_signed ? static_cast<int64_t>(number) : static_cast<int64_t>(number);
}

// bpftrace's labels: powers of two with K/M/G/T suffixes, lhist bounds divisible by 1K or 1M.
std::string power_label(int power) {
  const char* suffix = "";
  if (power >= 40) {
    suffix = "T";
    power -= 40;
  } else if (power >= 30) {
    suffix = "G";
    power -= 30;
  } else if (power >= 20) {
    suffix = "M";
    power -= 20;
  } else if (power >= 10) {
    suffix = "K";
    power -= 10;
  }
  return fmt::format("{}{}", uint64_t{1} << power, suffix);
}

std::string linear_label(int64_t number) {
  if (number == 0) return "0";
  if (number % 1048576 == 0) return fmt::format("{}M", number / 1048576);
  if (number % 1024 == 0) return fmt::format("{}K", number / 1024);
  return fmt::format("{}", number);
}

// bcc's _stars(): `width` stars for the biggest value.
std::string stars(uint64_t value, uint64_t most, int width) {
  std::string text;
  for (int i = 0; i < width; ++i) {
    if (static_cast<double>(i) > static_cast<double>(width) * static_cast<double>(value) / static_cast<double>(most) - 1)
      break;
    text += '*';
  }
  return text;
}

}  // namespace

int log2_bucket(int64_t value) {
  if (value < 0) return 0;
  if (value == 0) return 1;
  return 2 + (63 - std::countl_zero(static_cast<uint64_t>(value)));
}

int funclatency_bucket(uint64_t value) { return value == 0 ? 0 : 64 - std::countl_zero(value); }

std::string summary_event(std::string_view text) { return std::string(text.substr(0, text.find(':'))); }

Result<SummarySpec> parse_summary(SummaryKind kind, std::string_view text, const EventDescription& event) {
  SummarySpec spec;
  spec.kind = kind;
  spec.text = std::string(text);
  std::vector<std::string_view> parts = split(text, ':');
  spec.event = std::string(parts.front());
  parts.erase(parts.begin());
  const std::vector<probe::filter::FilterField> fields = fields_of(event);
  const std::string option = fmt::format("{} '{}'", option_of(kind), text);
  auto field_named = [&](std::string_view name) -> Result<probe::filter::FilterField> {
    const probe::filter::FilterField* field = probe::filter::find_field(fields, name);
    if (field == nullptr) return make_error(fmt::format("{}: the event {} has no field '{}'", option, spec.event, name));
    return *field;
  };
  const bool measures = kind != SummaryKind::Count && kind != SummaryKind::Latency;
  size_t at = 0;
  if (measures) {
    if (parts.empty() || parts[0].empty()) return make_error(fmt::format("{}: give GRP/EVENT:FIELD", option));
    auto field = field_named(parts[at++]);
    if (!field) return field.error();
    if (field->is_string) return make_error(fmt::format("{}: '{}' is a string, not a number", option, field->name));
    spec.field = *field;
  }
  if (kind == SummaryKind::Lhist) {
    if (parts.size() < at + 3) return make_error(fmt::format("{}: give GRP/EVENT:FIELD:MIN:MAX:STEP", option));
    const auto min = integer_in(parts[at]), max = integer_in(parts[at + 1]), step = integer_in(parts[at + 2]);
    if (!min || !max || !step || *step <= 0 || *max <= *min || (*max - *min) / *step > 1000)
      return make_error(fmt::format("{}: MIN:MAX:STEP must be integers with MIN < MAX, STEP > 0, at most 1000 buckets", option));
    spec.min = *min;
    spec.max = *max;
    spec.step = *step;
    at += 3;
  }
  if (parts.size() > at) {
    auto key = field_named(parts[at++]);
    if (!key) return key.error();
    spec.key = *key;
  }
  if (parts.size() > at) return make_error(fmt::format("{}: more parts than it takes", option));
  if (kind == SummaryKind::Latency && !event.is_return)
    return make_error(fmt::format("{}: {} is not a return probe (r: or %return)", option, spec.event));
  return spec;
}

int Summary::bucket_of(int64_t value, uint64_t latency_ns) const {
  switch (spec_.kind) {
    case SummaryKind::Hist: return log2_bucket(value);
    case SummaryKind::Lhist: {
      const int64_t buckets = (spec_.max - spec_.min) / spec_.step;
      if (value < spec_.min) return 0;
      if (value >= spec_.max) return static_cast<int>(buckets) + 1;
      return static_cast<int>((value - spec_.min) / spec_.step) + 1;
    }
    case SummaryKind::Latency: return funclatency_bucket(latency_ns);
    default: return 0;
  }
}

void Summary::fold(Entry& entry, int bucket, uint64_t count, int64_t sum, int64_t min, int64_t max) {
  if (entry.count == 0 || min < entry.min) entry.min = min;
  if (entry.count == 0 || max > entry.max) entry.max = max;
  entry.count += static_cast<int64_t>(count);
  entry.sum += sum;
  if (spec_.kind == SummaryKind::Hist || spec_.kind == SummaryKind::Lhist || spec_.kind == SummaryKind::Latency)
    entry.buckets[bucket] += count;
}

void Summary::add(const EventRecord& record, bool is_return, uint64_t latency_ns) {
  const probe::filter::FilterInputs inputs = inputs_of(record, is_return);
  Key key;
  if (spec_.key) {
    const probe::filter::FieldValue value = probe::filter::field_value(*spec_.key, inputs);
    if (value.is_string) key.text = std::string(value.text);
    else key.number = signed_value(*spec_.key, value.number);
  }
  int64_t value = 0;
  if (spec_.field) value = signed_value(*spec_.field, probe::filter::field_value(*spec_.field, inputs).number);
  if (spec_.kind == SummaryKind::Latency) value = static_cast<int64_t>(latency_ns);
  fold(entries_[key], bucket_of(value, latency_ns), 1, value, value, value);
}

void Summary::add_aggregated(const probe::AggregationUpdate& update) {
  dropped_ += update.dropped;
  for (const probe::AggregatedEntry& aggregated : update.entries) {
    // The key words: the key (a number, or a string's words), then the bucket.
    Key key;
    size_t word = 0;
    if (spec_.key) {
      if (spec_.key->is_string) {
        char text[agent::kAggStringBytes + 1] = {};
        std::memcpy(text, aggregated.key, agent::kAggStringBytes);
        key.text = text;
        word = agent::kAggStringBytes / 8;
      } else {
        key.number = static_cast<int64_t>(aggregated.key[word++]);
      }
    }
    const int bucket = word < agent::kAggKeyWords ? static_cast<int>(static_cast<int64_t>(aggregated.key[word])) : 0;
    const auto sum = static_cast<int64_t>(aggregated.values[0]);
    const bool extremes = spec_.kind == SummaryKind::Min || spec_.kind == SummaryKind::Max;
    fold(entries_[key], bucket, aggregated.hitcount, sum, extremes ? static_cast<int64_t>(aggregated.values[1]) : 0,
         extremes ? static_cast<int64_t>(aggregated.values[2]) : 0);
  }
}

std::string Summary::map_name() const {
  std::string name = "@" + spec_.event.substr(spec_.event.find('/') + 1);
  if (spec_.field) name += "_" + spec_.field->name;
  return name;
}

std::string Summary::key_text(const Key& key) const {
  if (!spec_.key) return {};
  return spec_.key->is_string ? key.text : fmt::format("{}", key.number);
}

std::string Summary::bucket_label(int i) const {
  if (spec_.kind == SummaryKind::Latency) {
    uint64_t low = (uint64_t{1} << i) >> 1, high = i >= 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1;
    if (low == high && low != 0) low -= 1;
    return fmt::format("{} -> {}", low, high);
  }
  if (spec_.kind == SummaryKind::Hist) {
    if (i == 0) return "(..., 0)";
    if (i == 1) return "[0]";
    if (i == 2) return "[1]";
    return fmt::format("[{}, {})", power_label(i - 2), power_label(i - 1));
  }
  const int64_t linear_buckets = (spec_.max - spec_.min) / spec_.step;
  if (i == 0) return fmt::format("(..., {})", linear_label(spec_.min));
  if (i == linear_buckets + 1) return fmt::format("[{}, ...)", linear_label(spec_.max));
  return fmt::format("[{}, {})", linear_label((i - 1) * spec_.step + spec_.min), linear_label(i * spec_.step + spec_.min));
}

std::string Summary::format_buckets(const Entry& entry) const {
  if (entry.buckets.empty()) return {};
  const int first = entry.buckets.begin()->first, last = entry.buckets.rbegin()->first;
  uint64_t most = 0;
  for (const auto& [index, count] : entry.buckets) most = std::max(most, count);
  std::string out;
  for (int i = first; i <= last; ++i) {
    const auto found = entry.buckets.find(i);
    const uint64_t count = found == entry.buckets.end() ? 0 : found->second;
    const std::string label = bucket_label(i);
    const auto bar = static_cast<size_t>(static_cast<float>(count) / static_cast<float>(most) * 52.0f);
    out += fmt::format("{:<16}{:>8} |{:<52}|\n", label, count, std::string(bar, '@'));
  }
  return out;
}

std::string Summary::format_latency(const Entry& entry) const {
  int last = -1;
  uint64_t most = 0;
  for (const auto& [index, count] : entry.buckets) {
    if (count > 0) last = std::max(last, index);
    most = std::max(most, count);
  }
  std::string out;
  const bool wide = last > 32;
  if (last > 0) out += wide ? fmt::format("               {:<29} : count     distribution\n", "nsecs")
                            : fmt::format("     {:<19} : count     distribution\n", "nsecs");
  for (int i = 1; i <= last; ++i) {
    uint64_t low = (uint64_t{1} << i) >> 1, high = i >= 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1;
    if (low == high) low -= 1;
    const auto found = entry.buckets.find(i);
    const uint64_t count = found == entry.buckets.end() ? 0 : found->second;
    if (wide) out += fmt::format("{:>20} -> {:<20} : {:<8} |{:<20}|\n", low, high, count, stars(count, most, 20));
    else out += fmt::format("{:>10} -> {:<10} : {:<8} |{:<40}|\n", low, high, count, stars(count, most, 40));
  }
  out += fmt::format("\navg = {} nsecs, total: {} nsecs, count: {}\n", entry.count ? entry.sum / entry.count : 0, entry.sum,
                     entry.count);
  return out;
}

std::string Summary::format() const {
  using Item = std::pair<const Key*, const Entry*>;
  std::vector<Item> items;
  for (const auto& [key, entry] : entries_) items.emplace_back(&key, &entry);
  auto value_of = [&](const Entry& entry) -> int64_t {
    switch (spec_.kind) {
      case SummaryKind::Sum: return entry.sum;
      case SummaryKind::Avg: return entry.count ? entry.sum / entry.count : 0;
      case SummaryKind::Min: return entry.min;
      case SummaryKind::Max: return entry.max;
      default: return entry.count;
    }
  };
  // As bpftrace prints a map: smallest value first.
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) { return value_of(*a.second) < value_of(*b.second); });
  std::string out;
  if (spec_.kind == SummaryKind::Latency) {
    if (items.empty()) out = "\navg = 0 nsecs, total: 0 nsecs, count: 0\n";
    for (const Item& item : items) {
      if (spec_.key) out += fmt::format("\n{} = {}\n", spec_.key->name, key_text(*item.first));
      out += format_latency(*item.second);
    }
    if (dropped_ != 0) out += fmt::format("Dropped: {} calls (no room for their key)\n", dropped_);
    return out;
  }
  const std::string name = map_name();
  const bool histogram = spec_.kind == SummaryKind::Hist || spec_.kind == SummaryKind::Lhist;
  for (const Item& item : items) {
    const std::string where = spec_.key ? fmt::format("{}[{}]", name, key_text(*item.first)) : name;
    if (histogram) out += fmt::format("{}:\n{}\n", where, format_buckets(*item.second));
    else out += fmt::format("{}: {}\n", where, value_of(*item.second));
  }
  if (items.empty() && !histogram) out += fmt::format("{}: 0\n", name);
  if (dropped_ != 0) out += fmt::format("Dropped: {} hits (no room for their key)\n", dropped_);
  return out + (histogram ? "" : "\n");
}

std::vector<CounterSample> Summary::counters() const {
  std::vector<CounterSample> out;
  const bool buckets = spec_.kind == SummaryKind::Hist || spec_.kind == SummaryKind::Lhist || spec_.kind == SummaryKind::Latency;
  const std::string name = spec_.kind == SummaryKind::Latency ? "latency " + spec_.event : map_name();
  for (const auto& [key, entry] : entries_) {
    if (buckets) {
      const std::string track = spec_.key ? fmt::format("{}[{}]", name, key_text(key)) : name;
      for (const auto& [index, count] : entry.buckets)
        if (spec_.kind != SummaryKind::Latency || index > 0) out.push_back({track, bucket_label(index), static_cast<int64_t>(count)});
      if (spec_.kind == SummaryKind::Latency) out.push_back({track + " avg", "nsecs", entry.count ? entry.sum / entry.count : 0});
      continue;
    }
    int64_t value = entry.count;
    switch (spec_.kind) {
      case SummaryKind::Sum: value = entry.sum; break;
      case SummaryKind::Avg: value = entry.count ? entry.sum / entry.count : 0; break;
      case SummaryKind::Min: value = entry.min; break;
      case SummaryKind::Max: value = entry.max; break;
      default: break;
    }
    out.push_back({name, spec_.key ? key_text(key) : "value", value});
  }
  if (entries_.empty() && !buckets && !spec_.key) out.push_back({name, "value", 0});
  return out;
}

}  // namespace xprobe::trace
