#include "trace/json/json_formatter.h"

#include <gtest/gtest.h>

#include <cctype>

namespace xprobe::trace {
namespace {

TEST(JsonQuote, EscapesControlsQuotesAndInvalidUtf8) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(json_quote(std::string("\x01\x7f", 2)), "\"\\u0001\\u007f\"");
  EXPECT_EQ(json_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");         // valid UTF-8 stays
  EXPECT_EQ(json_quote("\xff\xc3"), "\"\\u00ff\\u00c3\"");          // invalid bytes escaped
  EXPECT_EQ(json_quote("\xc0\xaf"), "\"\\u00c0\\u00af\"");          // overlong encoding
  EXPECT_EQ(json_quote("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");  // surrogate
}

TEST(JsonEvent, EntryAndReturnEvents) {
  EventCatalog catalog(1);
  catalog[0].group = "uprobes";
  catalog[0].event = "xpt";
  catalog[0].argument_names = {"a", "n", "x", "s", "bad", "arr", "c"};
  EventRecord record;
  record.tid = 9559;
  record.comm = "t";
  record.cpu = 1;
  record.timestamp_ns = 441094151000ull;
  record.address = 0x55ef9f203149;
  auto make = [](probe::TypeKind kind, uint8_t size, std::vector<uint64_t> numbers, uint16_t count = 0) {
    probe::FetchedValue value;
    value.type.kind = kind;
    value.type.size = size;
    value.type.array_count = count;
    value.numbers = std::move(numbers);
    return value;
  };
  probe::FetchedValue s;
  s.type.kind = probe::TypeKind::String;
  s.strings = {std::string("wo\"rld\n")};
  probe::FetchedValue bad;
  bad.type.kind = probe::TypeKind::String;
  bad.strings = {std::nullopt};
  bad.fault = true;
  record.values = {make(probe::TypeKind::Unsigned, 4, {5}), make(probe::TypeKind::Signed, 8, {~uint64_t{4}}),
                   make(probe::TypeKind::Hex, 8, {0x7b}), s, bad,
                   make(probe::TypeKind::Signed, 4, {1, 0xfffffffe}, 2), make(probe::TypeKind::Char, 1, {'w'})};
  EXPECT_EQ(format_json_event(record, catalog),
            "{\"event\":\"uprobes/xpt\",\"tid\":9559,\"comm\":\"t\",\"cpu\":1,\"timestamp_ns\":441094151000,"
            "\"address\":\"0x55ef9f203149\",\"args\":{\"a\":5,\"n\":-5,\"x\":\"0x7b\",\"s\":\"wo\\\"rld\\n\","
            "\"bad\":null,\"arr\":[1,-2],\"c\":\"w\"},\"faults\":[\"bad\"]}\n");
  record.function_address = 0x55ef9f203149;
  record.address = 0x55ef9f2031a3;
  record.values.clear();
  EXPECT_EQ(format_json_event(record, catalog),
            "{\"event\":\"uprobes/xpt\",\"tid\":9559,\"comm\":\"t\",\"cpu\":1,\"timestamp_ns\":441094151000,"
            "\"address\":\"0x55ef9f2031a3\",\"function\":\"0x55ef9f203149\",\"args\":{}}\n");
}

}  // namespace
}  // namespace xprobe::trace

namespace xprobe::trace {
namespace {

// An independent check of a JSON string literal: quotes, legal escapes, no raw control
// characters, and well-formed UTF-8 (RFC 8259 section 7 and RFC 3629).
bool is_json_string(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return false;
  for (size_t i = 1; i + 1 < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"') return false;
    if (c == '\\') {
      if (i + 2 >= text.size()) return false;
      const char e = text[i + 1];
      if (e == 'u') {
        if (i + 6 >= text.size()) return false;
        for (size_t k = 2; k < 6; ++k) {
          if (!std::isxdigit(static_cast<unsigned char>(text[i + k]))) return false;
        }
        i += 6;
        continue;
      }
      if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) return false;
      i += 2;
      continue;
    }
    if (c < 0x20) return false;
    size_t length = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (length == 0 || i + length >= text.size()) return false;
    uint32_t code = length == 1 ? c : c & (0x7fu >> length);
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    const uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < minimum[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

TEST(JsonQuote, RandomBytesAlwaysGiveValidJson) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 5000; ++round) {
    std::string bytes;
    const size_t length = round % 40;
    for (size_t i = 0; i < length; ++i) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      bytes += static_cast<char>(state & 0xff);
    }
    const std::string quoted = json_quote(bytes);
    ASSERT_TRUE(is_json_string(quoted)) << quoted;
  }
  EXPECT_FALSE(is_json_string("\"\xff\""));  // the checker itself refuses what it should
  EXPECT_FALSE(is_json_string("\"a\nb\""));
}

}  // namespace
}  // namespace xprobe::trace
