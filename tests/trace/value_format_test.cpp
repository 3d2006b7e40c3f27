#include "trace/value_format.h"

#include <gtest/gtest.h>

namespace xprobe::trace {
namespace {

probe::FetchedValue number(probe::TypeKind kind, uint8_t size, std::vector<uint64_t> values, uint16_t count = 0) {
  probe::FetchedValue value;
  value.type.kind = kind;
  value.type.size = size;
  value.type.array_count = count;
  value.numbers = std::move(values);
  return value;
}

TEST(ValueFormat, IntegersAsTheKernelPrintsThem) {
  using probe::TypeKind;
  EXPECT_EQ(format_value(number(TypeKind::Unsigned, 1, {251})), "251");
  EXPECT_EQ(format_value(number(TypeKind::Unsigned, 8, {18446744073709551615ull})), "18446744073709551615");
  EXPECT_EQ(format_value(number(TypeKind::Signed, 1, {0xfb})), "-5");
  EXPECT_EQ(format_value(number(TypeKind::Signed, 2, {0x7fff})), "32767");
  EXPECT_EQ(format_value(number(TypeKind::Signed, 4, {0x80000000})), "-2147483648");
  EXPECT_EQ(format_value(number(TypeKind::Signed, 8, {0x8000000000000000ull})), "-9223372036854775808");
  EXPECT_EQ(format_value(number(TypeKind::Hex, 1, {0xfb})), "0xfb");
  EXPECT_EQ(format_value(number(TypeKind::Hex, 4, {0})), "0x0");
  EXPECT_EQ(format_value(number(TypeKind::Hex, 8, {0x446420})), "0x446420");  // no zero padding
  EXPECT_EQ(format_value(number(TypeKind::Char, 1, {'w'})), "'w'");
  EXPECT_EQ(format_value(number(TypeKind::Bitfield, 4, {17})), "17");
}

TEST(ValueFormat, Arrays) {
  using probe::TypeKind;
  EXPECT_EQ(format_value(number(TypeKind::Signed, 4, {1, 0xfffffffe, 3}, 3)), "{1,-2,3}");
  EXPECT_EQ(format_value(number(TypeKind::Hex, 1, {5, 0, 0}, 3)), "{0x5,0x0,0x0}");
  EXPECT_EQ(format_value(number(TypeKind::Char, 1, {'w', 'o', 'r'}, 3)), "{'w','o','r'}");
  EXPECT_EQ(format_value(number(TypeKind::Unsigned, 2, {7}, 1)), "{7}");
}

TEST(ValueFormat, StringsAndFaults) {
  probe::FetchedValue text;
  text.type.kind = probe::TypeKind::String;
  text.strings = {std::string("hello")};
  EXPECT_EQ(format_value(text), "\"hello\"");
  text.strings = {std::string()};
  EXPECT_EQ(format_value(text), "\"\"");
  text.strings = {std::nullopt};
  text.fault = true;
  EXPECT_EQ(format_value(text), "(fault)");
  text.type.array_count = 3;
  text.strings = {std::string("a"), std::nullopt, std::string("c")};
  EXPECT_EQ(format_value(text), "{\"a\",(fault),\"c\"}");
  probe::FetchedValue faulted = number(probe::TypeKind::Unsigned, 8, {0});
  faulted.fault = true;
  EXPECT_EQ(format_value(faulted), "0");  // the kernel records 0 for a faulting number
}

TEST(ValueFormat, SymbolsThroughTheSymbolizer) {
  const Symbolizer symbolizer = [](uint64_t address) -> std::optional<std::string> {
    if (address == 0x401010) return std::string("main+0x10/0x40");
    return std::nullopt;
  };
  EXPECT_EQ(format_value(number(probe::TypeKind::Symbol, 8, {0x401010}), symbolizer), "main+0x10/0x40");
  EXPECT_EQ(format_value(number(probe::TypeKind::Symbol, 8, {0x7f0000001234}), symbolizer), "0x7f0000001234");
  EXPECT_EQ(format_value(number(probe::TypeKind::Symbol, 8, {0x401010})), "0x401010");
}

}  // namespace
}  // namespace xprobe::trace
