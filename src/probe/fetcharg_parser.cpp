#include "probe/fetcharg_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "probe/kernel_messages.h"
#include "probe/kernel_numbers.h"

namespace xprobe::probe {
namespace {

// Field names every event already has (the kernel's reserved_field_names).
constexpr std::array<std::string_view, 8> kReservedNames = {
    "common_type", "common_flags", "common_preempt_count", "common_pid",
    "common_tgid", "__probe_ip",   "__probe_ret_ip",       "__probe_func"};

using MaybeError = std::optional<ParseError>;

class FetchArgParser {
 public:
  explicit FetchArgParser(const FetchArgContext& context) : context_(context) {}

  ParseResult<ProbeArgument> parse(std::string_view text, size_t column, size_t index,
                                   std::span<const ProbeArgument> earlier) {
    ProbeArgument argument;
    argument.text = std::string(text);
    argument.column = column;
    std::string_view body = text;
    size_t body_column = column;

    const size_t equals = body.find('=');
    if (equals != std::string_view::npos) {
      if (equals > kMaxArgumentNameLength) return fail(column, msg::kArgNameTooLong);
      if (equals == 0) return fail(column, msg::kNoArgName);
      argument.name = std::string(body.substr(0, equals));
      argument.name_given = true;
      body.remove_prefix(equals + 1);
      body_column += equals + 1;
    } else {
      argument.name = fmt::format("arg{}", index + 1);
    }
    if (!is_good_name(argument.name)) return fail(column, msg::kBadArgName);
    const bool reserved = std::find(kReservedNames.begin(), kReservedNames.end(), argument.name) != kReservedNames.end();
    const bool duplicate = std::any_of(earlier.begin(), earlier.end(),
                                       [&](const ProbeArgument& other) { return other.name == argument.name; });
    if (reserved || duplicate) return fail(column, msg::kUsedArgName);
    if (body.empty()) return fail(body_column, msg::kNoArgBody);
    if (body.size() > kMaxArgumentLength) return fail(body_column, msg::kArgTooLong);

    // TYPE and [N] first, as the kernel does.
    std::string_view expression_text = body;
    std::string_view type_text;
    size_t type_column = 0;
    bool has_type = false;
    const size_t colon = body.find(':');
    if (colon != std::string_view::npos) {
      has_type = true;
      expression_text = body.substr(0, colon);
      type_text = body.substr(colon + 1);
      type_column = body_column + colon + 1;
      const size_t open = type_text.find('[');
      if (open != std::string_view::npos) {
        const size_t close = type_text.find(']', open);
        if (close == std::string_view::npos) return fail(body_column + body.size(), msg::kArrayNoClose);
        if (close + 1 != type_text.size()) return fail(type_column + close + 1, msg::kBadArraySuffix);
        const auto count = parse_unsigned(type_text.substr(open + 1, close - open - 1));
        if (!count || *count == 0) return fail(type_column + open + 1, msg::kBadArrayNum);
        if (*count > kMaxArrayLength) return fail(type_column + open + 1, msg::kArrayTooBig);
        argument.type.array_count = static_cast<uint16_t>(*count);
        type_text = type_text.substr(0, open);
      }
    }
    const bool string_only = expression_text == "$comm" || expression_text.substr(0, 2) == "\\\"";
    bool bitfield_ok = true;
    if (string_only) {
      if (argument.type.array_count != 0 || (has_type && type_text != "string")) {
        return fail(type_column, msg::kNeedStringType);
      }
      argument.type = *fetch_type_named("string", context_.abi.word_size);
    } else if (has_type) {
      const uint16_t count = argument.type.array_count;
      const auto type = parse_type(type_text, bitfield_ok);
      if (!type) return fail(type_column, msg::kBadType);
      argument.type = *type;
      argument.type.array_count = count;
    } else {
      argument.type = default_fetch_type(context_.abi.word_size);
    }
    argument.type_given = has_type;

    if (auto error = parse_expression(expression_text, body_column, argument.expression)) return std::move(*error);

    const FetchExpression& expression = argument.expression;
    const FetchSource::Kind source = expression.source.kind;
    const bool memory = expression.is_memory();
    if (argument.type.is_string()) {
      const bool direct = !memory && (source == FetchSource::Kind::Immediate || source == FetchSource::Kind::Comm ||
                                      source == FetchSource::Kind::ImmediateString);
      // string[N] reads N char* at the address: a dereference or an immediate address.
      const bool array_ok = memory || source == FetchSource::Kind::Immediate;
      if (!(memory || direct) || (argument.type.is_array() && !array_ok)) return fail(type_column, msg::kBadString);
    } else if (argument.type.is_array() && !memory) {
      return fail(type_column, msg::kBadString);
    }
    if (!bitfield_ok) return fail(type_column, msg::kBadBitfield);
    return argument;
  }

 private:
  ParseError fail(size_t column, std::string_view message) const {
    return parse_error_at(context_.command, column, message);
  }

  // A type name (without [N]); `bitfield_ok` reports a bitfield whose width/offset do not
  // fit, which the kernel reports only after the expression.
  std::optional<FetchType> parse_type(std::string_view name, bool& bitfield_ok) const {
    if (auto named = fetch_type_named(name, context_.abi.word_size)) return named;
    if (name.empty() || name[0] != 'b') return std::nullopt;
    // b<width>@<offset>/<container>
    const size_t slash = name.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const auto container = parse_unsigned(name.substr(slash + 1));
    if (!container || (*container != 8 && *container != 16 && *container != 32 && *container != 64)) {
      return std::nullopt;
    }
    FetchType type;
    type.kind = TypeKind::Bitfield;
    type.size = static_cast<uint8_t>(*container / 8);
    size_t consumed = 0;
    const std::string_view width_text = name.substr(1);
    const uint64_t width = parse_prefix_unsigned(width_text, consumed);
    if (width == 0 || consumed >= width_text.size() || width_text[consumed] != '@') {
      bitfield_ok = false;
      return type;
    }
    const std::string_view offset_text = width_text.substr(consumed + 1);
    size_t offset_consumed = 0;
    const uint64_t offset = parse_prefix_unsigned(offset_text, offset_consumed);
    if (offset_consumed == 0 || offset_consumed >= offset_text.size() || offset_text[offset_consumed] != '/' ||
        width + offset > *container) {
      bitfield_ok = false;
      return type;
    }
    type.bit_width = static_cast<uint8_t>(width);
    type.bit_offset = static_cast<uint8_t>(offset);
    return type;
  }

  MaybeError parse_expression(std::string_view text, size_t column, FetchExpression& out) const {
    std::vector<Dereference> outer_first;
    // The kernel's caret for too deep a nesting: inside the outermost dereference.
    std::optional<size_t> outermost_inner_column;
    // Dereferences: +|-[u]OFFS(FETCHARG), peeled from the outside in.
    while (!text.empty() && (text[0] == '+' || text[0] == '-')) {
      Dereference deref;
      size_t digits_start = 1;
      if (text.size() > 1 && text[1] == 'u') {
        deref.user = true;
        digits_start = 2;
      }
      const size_t open = text.find('(');
      if (open == std::string_view::npos) return fail(column, msg::kDerefNeedBrace);
      const std::string_view number = text.substr(digits_start, open - digits_start);
      // As the kernel: '+' is skipped and the rest is a kstrtol number (so "+-8" is -8);
      // '-' stays part of the number (so "-+8" is refused).
      const auto offset = text[0] == '+' ? parse_signed(number) : parse_negated(number);
      if (!offset) return fail(column, msg::kBadDerefOffs);
      deref.offset = *offset;
      const size_t close = text.rfind(')');
      const size_t inner_column = column + open + 1;
      if (close == std::string_view::npos || close < open) return fail(column + text.size(), msg::kDerefOpenBrace);
      if (close + 1 != text.size()) return fail(column + close + 1, msg::kBadFetchArg);
      outer_first.push_back(deref);
      if (!outermost_inner_column) outermost_inner_column = inner_column;
      text = text.substr(open + 1, close - open - 1);
      column = inner_column;
      if (text == "$comm" || text.substr(0, 2) == "\\\"") return fail(column, msg::kCommCantDeref);
    }
    out.derefs.assign(outer_first.rbegin(), outer_first.rend());
    if (auto error = parse_source(text, column, out)) return error;
    // Counted as the kernel counts them: every memory read, the one @ADDR implies included.
    if (out.derefs.size() > kMaxDereferenceDepth) return fail(outermost_inner_column.value_or(column), msg::kTooManyOps);
    return std::nullopt;
  }

  MaybeError parse_source(std::string_view text, size_t column, FetchExpression& out) const {
    FetchSource& source = out.source;
    if (text.empty()) return fail(column, msg::kBadFetchArg);
    switch (text[0]) {
      case '$': return parse_variable(text.substr(1), column, source);
      case '%': {
        const auto reg = find_register(context_.abi, text.substr(1));
        if (!reg) return fail(column, msg::kBadRegName);
        source.kind = FetchSource::Kind::Register;
        source.reg = *reg;
        source.text = std::string(text.substr(1));
        return std::nullopt;
      }
      case '@': return parse_memory(text, column, out);
      case '\\': {
        if (text.size() > 1 && text[1] == '"') {
          const std::string_view content = text.substr(2);
          if (content.empty() || content.back() != '"') return fail(column + text.size(), msg::kImmStrNoClose);
          source.kind = FetchSource::Kind::ImmediateString;
          source.text = std::string(content.substr(0, content.size() - 1));
          return std::nullopt;
        }
        const std::string_view number = text.substr(1);
        std::optional<uint64_t> value;
        if (!number.empty() && std::isdigit(static_cast<unsigned char>(number[0]))) {
          value = parse_unsigned(number);
        } else if (!number.empty() && (number[0] == '-' || number[0] == '+')) {
          const auto signed_value = parse_signed(number[0] == '+' ? number.substr(1) : number);
          if (signed_value) value = static_cast<uint64_t>(*signed_value);
        }
        if (!value) return fail(column + 1, msg::kBadImm);
        source.kind = FetchSource::Kind::Immediate;
        source.value = *value;
        return std::nullopt;
      }
      default: return parse_alias(text, column, source);
    }
  }

  MaybeError parse_variable(std::string_view name, size_t column, FetchSource& source) const {
    if (name == "retval") {
      if (context_.kind != ProbeKind::Return) return fail(column, msg::kRetvalOnProbe);
      source.kind = FetchSource::Kind::ReturnValue;
      return std::nullopt;
    }
    if (name == "comm") {
      source.kind = FetchSource::Kind::Comm;
      return std::nullopt;
    }
    if (name.substr(0, 5) == "stack") {
      const std::string_view index = name.substr(5);
      if (index.empty()) {
        source.kind = FetchSource::Kind::StackPointer;
        return std::nullopt;
      }
      const auto value = all_digits(index) ? parse_unsigned_decimal(index) : std::nullopt;
      if (!value) return fail(column, msg::kBadVar);
      source.kind = FetchSource::Kind::StackEntry;
      source.value = *value;
      return std::nullopt;
    }
    if (name.substr(0, 3) == "arg") {
      const std::string_view index = name.substr(3);
      const auto value = all_digits(index) ? parse_unsigned_decimal(index) : std::nullopt;
      if (!value) return fail(column, msg::kBadVar);
      return set_argument(*value, column, source);
    }
    return fail(column, msg::kBadVar);
  }

  MaybeError set_argument(uint64_t number, size_t column, FetchSource& source) const {
    if (number == 0 || number > kMaxArguments) return fail(column, msg::kBadArgNum);
    if (!context_.at_function_entry) return fail(column, msg::kNoFentryArgs);
    source.kind = FetchSource::Kind::Argument;
    source.value = number;
    return std::nullopt;
  }

  // @ADDR, @+FILE_OFFSET, @SYM[+|-OFFS]: all read memory, so a dereference follows.
  MaybeError parse_memory(std::string_view text, size_t column, FetchExpression& out) const {
    FetchSource& source = out.source;
    const std::string_view rest = text.substr(1);
    if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) {
      const auto address = parse_unsigned(rest);
      if (!address) return fail(column, msg::kBadMemAddr);
      source.kind = FetchSource::Kind::Immediate;
      source.value = *address;
    } else if (!rest.empty() && rest[0] == '+') {
      const auto offset = parse_signed(rest.substr(1));
      if (!offset) return fail(column, msg::kBadFileOffs);
      source.kind = FetchSource::Kind::FileOffsetAddress;
      source.value = static_cast<uint64_t>(*offset);
    } else {
      const size_t sign = rest.find_first_of("+-");
      const std::string_view symbol = rest.substr(0, sign);
      if (symbol.empty()) return fail(column, msg::kBadMemAddr);
      int64_t offset = 0;
      if (sign != std::string_view::npos) {
        const auto parsed = parse_signed(rest.substr(sign));
        if (!parsed) return fail(column, msg::kBadMemAddr);
        offset = *parsed;
      }
      source.kind = FetchSource::Kind::SymbolAddress;
      source.text = std::string(symbol);
      source.offset = offset;
    }
    out.derefs.push_back(Dereference{});
    return std::nullopt;
  }

  // The seed's short forms: aN, sN, rv, rp, rN.
  MaybeError parse_alias(std::string_view text, size_t column, FetchSource& source) const {
    if (text == "rv") return parse_variable("retval", column, source);
    if (text == "rp") {
      source.kind = FetchSource::Kind::ReturnAddress;
      return std::nullopt;
    }
    if (text.size() >= 2 && all_digits(text.substr(1))) {
      const auto number = parse_unsigned_decimal(text.substr(1));
      switch (text[0]) {
        case 'a':
          if (!number) return fail(column, msg::kBadArgNum);
          return set_argument(*number, column, source);
        case 's':
          if (!number) return fail(column, msg::kBadVar);
          source.kind = FetchSource::Kind::StackEntry;
          source.value = *number;
          return std::nullopt;
        case 'r':
          if (!number || *number >= context_.abi.block_order.size()) return fail(column, msg::kBadRegName);
          source.kind = FetchSource::Kind::Register;
          source.reg = static_cast<RegisterId>(*number);
          source.text = std::string(register_name(context_.abi, source.reg));
          return std::nullopt;
        default: break;
      }
    }
    return fail(column, msg::kBadFetchArg);
  }

  const FetchArgContext& context_;
};

}  // namespace

ParseResult<ProbeArgument> parse_fetch_argument(std::string_view text, size_t column, size_t index,
                                                std::span<const ProbeArgument> earlier,
                                                const FetchArgContext& context) {
  return FetchArgParser(context).parse(text, column, index, earlier);
}

}  // namespace xprobe::probe
