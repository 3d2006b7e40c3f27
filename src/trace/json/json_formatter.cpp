#include "trace/json/json_formatter.h"

#include <fmt/format.h>

namespace xprobe::trace {
namespace {

// Length of the valid UTF-8 sequence at `text[i]`, or 0.
size_t utf8_sequence(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  size_t length = 0;
  uint32_t minimum = 0;
  if (lead >= 0xc2 && lead <= 0xdf) { length = 2; minimum = 0x80; }
  else if (lead >= 0xe0 && lead <= 0xef) { length = 3; minimum = 0x800; }
  else if (lead >= 0xf0 && lead <= 0xf4) { length = 4; minimum = 0x10000; }
  else return 0;
  if (i + length > text.size()) return 0;
  uint32_t code = lead & (0xffu >> (length + 1));
  for (size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xc0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  if (code < minimum || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

// A number as a JSON number, or the ftrace text of the element (without the quotes ftrace
// puts around chars and symbol strings) as a JSON string; the type's row says which.
std::string json_element(uint64_t raw, const probe::FetchType& type, const Symbolizer& symbolizer) {
  std::string text = format_number(raw, type, symbolizer);
  if (type.traits().json == probe::JsonShape::Number) return text;
  const probe::TextStyle style = type.traits().text;
  if (style == probe::TextStyle::Character && text.size() >= 2) {
    text = text.substr(1, text.size() - 2);
  }
  return json_quote(text);
}

}  // namespace

std::string json_value(const probe::FetchedValue& value, const Symbolizer& symbolizer) {
  std::vector<std::string> elements;
  if (value.type.is_string()) {
    for (const auto& text : value.strings) elements.push_back(text ? json_quote(*text) : "null");
  } else {
    for (uint64_t raw : value.numbers) elements.push_back(json_element(raw, value.type, symbolizer));
  }
  if (!value.type.is_array()) return elements.empty() ? std::string("null") : elements.front();
  return fmt::format("[{}]", fmt::join(elements, ","));
}

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else if (c >= 0x80) {
      const size_t length = utf8_sequence(text, i);
      if (length == 0) {
        out += fmt::format("\\u{:04x}", c);
      } else {
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string format_json_event(const EventRecord& record, const EventCatalog& catalog, const Symbolizer& symbolizer) {
  const EventDescription* description = record.probe_id < catalog.size() ? &catalog[record.probe_id] : nullptr;
  const std::string event =
      description ? description->group + "/" + description->event : fmt::format("probe{}", record.probe_id);
  std::string out = fmt::format("{{\"event\":{},\"tid\":{},\"comm\":{},\"cpu\":{},\"timestamp_ns\":{},\"address\":\"0x{:x}\"",
                                json_quote(event), record.tid, json_quote(record.comm), record.cpu, record.timestamp_ns,
                                record.address);
  if (record.function_address) out += fmt::format(",\"function\":\"0x{:x}\"", *record.function_address);
  out += ",\"args\":{";
  std::vector<std::string> faults;
  for (size_t i = 0; i < record.values.size(); ++i) {
    const std::string name = description && i < description->argument_names.size() ? description->argument_names[i]
                                                                                     : fmt::format("arg{}", i + 1);
    if (i != 0) out += ',';
    out += json_quote(name) + ":" + json_value(record.values[i], symbolizer);
    if (record.values[i].fault) faults.push_back(json_quote(name));
  }
  out += '}';
  if (!faults.empty()) out += fmt::format(",\"faults\":[{}]", fmt::join(faults, ","));
  out += "}\n";
  return out;
}

namespace {

class JsonWriter final : public EventWriter {
 public:
  explicit JsonWriter(const FormatContext& context) : context_(context) {}
  void write(const EventRecord& record, std::string& out) override {
    out += format_json_event(record, context_.catalog, context_.symbolizer);
  }

 private:
  FormatContext context_;
};

}  // namespace

std::unique_ptr<EventWriter> make_json_writer(const FormatContext& context) { return std::make_unique<JsonWriter>(context); }

}  // namespace xprobe::trace
