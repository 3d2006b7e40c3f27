#include "trace/json_formatter.h"

#include <gtest/gtest.h>

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
