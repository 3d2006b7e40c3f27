#include "probe/definition_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <optional>
#include <string>

namespace xprobe::probe {
namespace {

// The kernel's messages (kernel/trace/trace_probe.h ERRORS), as the running kernel prints them.
namespace msg {
constexpr std::string_view kBadUprobeOffset = "Invalid uprobe offset";
constexpr std::string_view kRefCtrOpenBrace = "Reference counter brace is not closed";
constexpr std::string_view kBadRefCtrSuffix = "Reference counter has wrong suffix";
constexpr std::string_view kBadRefCtr = "Invalid reference counter offset";
constexpr std::string_view kBadMaxactType = "Maxactive is only for function exit";
constexpr std::string_view kBadMaxact = "Invalid maxactive number";
constexpr std::string_view kMaxactTooBig = "Maxactive is too big";
constexpr std::string_view kBadProbeAddr = "Invalid probed address or symbol";
constexpr std::string_view kBadRetprobe = "Retprobe address must be an function entry";
constexpr std::string_view kBadAddrSuffix = "Invalid probed address suffix";
constexpr std::string_view kFileNotFound = "Failed to find the given file";
constexpr std::string_view kNoGroupName = "Group name is not specified";
constexpr std::string_view kGroupTooLong = "Group name is too long";
constexpr std::string_view kBadGroupName = "Group name must follow the same rules as C identifiers";
constexpr std::string_view kNoEventName = "Event name is not specified";
constexpr std::string_view kEventTooLong = "Event name is too long";
constexpr std::string_view kBadEventName = "Event name must follow the same rules as C identifiers";
constexpr std::string_view kRetvalOnProbe = "$retval is not available on probe";
constexpr std::string_view kBadArgNum = "Invalid argument number";
constexpr std::string_view kBadVar = "Invalid $-variable specified";
constexpr std::string_view kBadRegName = "Invalid register name";
constexpr std::string_view kBadMemAddr = "Invalid memory address";
constexpr std::string_view kBadImm = "Invalid immediate value";
constexpr std::string_view kImmStrNoClose = "String is not closed with '\"'";
constexpr std::string_view kBadFileOffs = "Invalid file offset value";
constexpr std::string_view kTooManyOps = "Dereference is too much nested";
constexpr std::string_view kDerefNeedBrace = "Dereference needs a brace";
constexpr std::string_view kBadDerefOffs = "Invalid dereference offset";
constexpr std::string_view kDerefOpenBrace = "Dereference brace is not closed";
constexpr std::string_view kCommCantDeref = "$comm can not be dereferenced";
constexpr std::string_view kBadFetchArg = "Invalid fetch argument";
constexpr std::string_view kArrayNoClose = "Array is not closed";
constexpr std::string_view kBadArraySuffix = "Array has wrong suffix";
constexpr std::string_view kBadArrayNum = "Invalid array size";
constexpr std::string_view kArrayTooBig = "Array number is too big";
constexpr std::string_view kBadType = "Unknown type is specified";
constexpr std::string_view kBadString = "String accepts only memory argument";
constexpr std::string_view kBadSymString = "Symbol String doesn't accept data/userdata";
constexpr std::string_view kBadBitfield = "Invalid bitfield";
constexpr std::string_view kArgNameTooLong = "Argument name is too long";
constexpr std::string_view kNoArgName = "Argument name is not specified";
constexpr std::string_view kBadArgName = "Argument name must follow the same rules as C identifiers";
constexpr std::string_view kUsedArgName = "This argument name is already used";
constexpr std::string_view kNoArgBody = "No argument expression";
constexpr std::string_view kNoFentryArgs = "$arg* can be used only on function entry or exit";
constexpr std::string_view kNeedStringType = "$comm and immediate-string only accepts string type";
constexpr std::string_view kTooManyArgs = "Too many arguments are specified";
// xprobe's own (the kernel gives no message for these).
constexpr std::string_view kEmpty = "Empty probe definition";
constexpr std::string_view kBadProbeType = "Unknown probe type: a definition starts with p, r or -";
constexpr std::string_view kNoPlace = "Probe point is not specified";
}  // namespace msg

// Field names every event already has (the kernel's reserved_field_names).
constexpr std::array<std::string_view, 8> kReservedNames = {
    "common_type", "common_flags", "common_preempt_count", "common_pid",
    "common_tgid", "__probe_ip",   "__probe_ret_ip",       "__probe_func"};

struct Word {
  std::string_view text;
  size_t column;
};

bool is_good_name(std::string_view name) {
  if (name.empty()) return false;
  const auto first = static_cast<unsigned char>(name[0]);
  if (!std::isalpha(first) && first != '_') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || c == '_';
  });
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// Like the kernel's simple_strtoul(s, &end, 0): as many digits as there are; `consumed` tells
// how many characters were used. Saturates instead of overflowing (callers accept <= 64).
uint64_t parse_prefix_unsigned(std::string_view text, size_t& consumed) {
  unsigned base = 10;
  size_t i = 0;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') && text.size() > 2 &&
      digit_value(text[2]) < 16) {
    base = 16;
    i = 2;
  } else if (!text.empty() && text[0] == '0') {
    base = 8;
  }
  uint64_t value = 0;
  while (i < text.size() && digit_value(text[i]) < static_cast<int>(base)) {
    value = value * base + static_cast<uint64_t>(digit_value(text[i]));
    if (value > (1ull << 40)) value = 1ull << 40;  // saturate: callers only accept small values
    ++i;
  }
  consumed = i;
  return value;
}

// Like the kernel's kstrtoull(s, 0): the whole text, 0x hex, leading 0 octal, else decimal;
// one leading '+' is allowed only where the kernel's public kstrtoull allows it.
std::optional<uint64_t> parse_unsigned(std::string_view text, bool allow_plus = true) {
  if (allow_plus && !text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  unsigned base = 10;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
    if (text.empty()) return std::nullopt;
  } else if (text.size() >= 2 && text[0] == '0') {
    base = 8;
  }
  uint64_t value = 0;
  for (char c : text) {
    const int d = digit_value(c);
    if (d >= static_cast<int>(base)) return std::nullopt;
    if (value > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) / base) return std::nullopt;
    value = value * base + static_cast<uint64_t>(d);
  }
  return value;
}

// Like the kernel's kstrtoll(s, 0): "-N", "+N" or "N"; no sign after a '-'.
std::optional<int64_t> parse_signed(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  const auto magnitude = negative ? parse_unsigned(text.substr(1), false) : parse_unsigned(text);
  if (!magnitude) return std::nullopt;
  if (negative) {
    if (*magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - *magnitude);
  }
  if (*magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(*magnitude);
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class DefinitionParser {
 public:
  DefinitionParser(std::string_view text, const ParseOptions& options)
      : abi_(probe_abi(options.arch)) {
    split_words(text);
  }

  ParseResult<ProbeDefinition> parse() {
    definition_.command = command_;
    if (words_.empty()) return fail(0, msg::kEmpty);
    if (auto error = parse_head(words_[0])) return std::move(*error);
    if (definition_.kind == ProbeKind::Delete) return std::move(definition_);
    if (words_.size() < 2) return fail(command_.size() + 1, msg::kNoPlace);
    if (auto error = parse_place(words_[1])) return std::move(*error);
    for (size_t i = 2; i < words_.size(); ++i) {
      if (i - 2 >= kMaxArguments) return fail(words_[i].column, msg::kTooManyArgs);
      if (auto error = parse_argument(words_[i], i - 2)) return std::move(*error);
    }
    if (!definition_.event_given && !definition_.place.is_glob) {
      definition_.event = derive_event_name(definition_.place, definition_.kind, definition_.place.symbol);
    }
    return std::move(definition_);
  }

 private:
  using MaybeError = std::optional<ParseError>;

  void split_words(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      const size_t start = i;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      if (i > start) {
        if (!command_.empty()) command_ += ' ';
        offsets_.push_back(command_.size());
        command_.append(text.substr(start, i - start));
      }
    }
    // Views into command_ are taken only once it no longer grows.
    for (size_t w = 0; w < offsets_.size(); ++w) {
      const size_t end = (w + 1 < offsets_.size()) ? offsets_[w + 1] - 1 : command_.size();
      words_.push_back({std::string_view(command_).substr(offsets_[w], end - offsets_[w]), offsets_[w]});
    }
  }

  ParseError fail(size_t column, std::string_view message) const {
    ParseError error;
    error.message = std::string(message);
    error.command = command_;
    error.column = column;
    return error;
  }

  // p[:[GRP/]EVENT], r[MAXACTIVE][:[GRP/]EVENT], -:[GRP/]EVENT
  MaybeError parse_head(const Word& word) {
    const std::string_view head = word.text;
    const char type = head[0];
    if (type != 'p' && type != 'r' && type != '-') return fail(word.column, msg::kBadProbeType);
    definition_.kind = type == 'p' ? ProbeKind::Entry : type == 'r' ? ProbeKind::Return : ProbeKind::Delete;
    const size_t colon = head.find(':');
    const std::string_view between = head.substr(1, colon == std::string_view::npos ? std::string_view::npos : colon - 1);
    if (!between.empty()) {
      if (type == '-') return fail(word.column + 1, msg::kBadProbeType);
      if (type == 'p') {
        return fail(word.column + 1, std::isdigit(static_cast<unsigned char>(between[0])) ? msg::kBadMaxactType
                                                                                          : msg::kBadProbeType);
      }
      const auto maxactive = parse_unsigned(between);
      if (!maxactive || !std::isdigit(static_cast<unsigned char>(between[0]))) return fail(word.column + 1, msg::kBadMaxact);
      if (*maxactive > kMaxActive) return fail(word.column + 1, msg::kMaxactTooBig);
      definition_.maxactive = static_cast<unsigned>(*maxactive);
    }
    if (colon == std::string_view::npos) {
      if (type == '-') return fail(word.column + 1, msg::kNoEventName);
      return std::nullopt;
    }
    return parse_event_name(head.substr(colon + 1), word.column + colon + 1);
  }

  MaybeError parse_event_name(std::string_view name, size_t column) {
    size_t slash = name.find('/');
    if (slash == std::string_view::npos) slash = name.find('.');
    bool group_given = false;
    if (slash != std::string_view::npos) {
      const std::string_view group = name.substr(0, slash);
      if (group.empty()) return fail(column, msg::kNoGroupName);
      if (group.size() > kMaxEventNameLength) return fail(column, msg::kGroupTooLong);
      if (!is_good_name(group)) return fail(column, msg::kBadGroupName);
      definition_.group = std::string(group);
      group_given = true;
      name.remove_prefix(slash + 1);
      column += slash + 1;
    }
    if (name.empty()) {
      // "p:GROUP/" keeps the generated event name; "p:" and "-:GROUP/" name nothing.
      if (!group_given || definition_.kind == ProbeKind::Delete) return fail(column, msg::kNoEventName);
      return std::nullopt;
    }
    if (name.size() > kMaxEventNameLength) return fail(column, msg::kEventTooLong);
    if (!is_good_name(name)) return fail(column, msg::kBadEventName);
    definition_.event = std::string(name);
    definition_.event_given = true;
    return std::nullopt;
  }

  // The first ':' that is not part of a C++ "::".
  static size_t find_binary_separator(std::string_view text) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != ':') continue;
      if (i + 1 < text.size() && text[i + 1] == ':') {
        ++i;
        continue;
      }
      return i;
    }
    return std::string_view::npos;
  }

  MaybeError parse_place(const Word& word) {
    ProbePlace& place = definition_.place;
    place.text = std::string(word.text);
    std::string_view text = word.text;
    const size_t column = word.column;

    std::string_view rest = text;
    size_t rest_column = column;
    const size_t separator = find_binary_separator(text);
    if (separator != std::string_view::npos) {
      if (separator == 0) return fail(column, msg::kFileNotFound);
      place.binary = std::string(text.substr(0, separator));
      rest = text.substr(separator + 1);
      rest_column = column + separator + 1;
    }
    if (rest.empty()) return fail(rest_column, msg::kBadUprobeOffset);

    const bool numeric = std::isdigit(static_cast<unsigned char>(rest[0])) != 0;
    // BINARY:OFFSET(REF_CTR_OFFSET), the SDT semaphore of uprobe_events.
    if (numeric && !place.binary.empty()) {
      const size_t open = rest.find('(');
      if (open != std::string_view::npos) {
        const size_t close = rest.find(')', open);
        if (close == std::string_view::npos) return fail(rest_column + rest.size(), msg::kRefCtrOpenBrace);
        if (close + 1 != rest.size()) return fail(rest_column + close + 1, msg::kBadRefCtrSuffix);
        const auto ref_ctr = parse_unsigned(rest.substr(open + 1, close - open - 1));
        if (!ref_ctr) return fail(rest_column + open + 1, msg::kBadRefCtr);
        place.ref_ctr_offset = *ref_ctr;
        rest = rest.substr(0, open);
      }
    }
    const size_t percent = rest.find('%');
    if (percent != std::string_view::npos) {
      if (rest.substr(percent) != "%return") return fail(rest_column + percent, msg::kBadAddrSuffix);
      definition_.kind = ProbeKind::Return;
      rest = rest.substr(0, percent);
      if (rest.empty()) return fail(rest_column, msg::kBadProbeAddr);
    }

    if (numeric) {
      const auto value = parse_unsigned(rest);
      if (!place.binary.empty()) {
        if (!value) return fail(rest_column, msg::kBadUprobeOffset);
        place.kind = ProbePlace::Kind::FileOffset;
      } else {
        if (!value) return fail(rest_column, msg::kBadProbeAddr);
        place.kind = ProbePlace::Kind::VirtualAddress;
      }
      place.address = *value;
      return std::nullopt;
    }

    place.kind = ProbePlace::Kind::Symbol;
    const size_t sign = rest.find_first_of("+-");
    std::string_view symbol = rest.substr(0, sign);
    if (symbol.empty()) return fail(rest_column, msg::kBadProbeAddr);
    if (sign != std::string_view::npos) {
      const auto offset = parse_signed(rest.substr(sign));
      if (!offset) return fail(rest_column + sign, msg::kBadProbeAddr);
      place.offset = *offset;
    }
    place.symbol = std::string(symbol);
    place.is_glob = symbol.find_first_of("*?[") != std::string_view::npos;
    if (definition_.kind == ProbeKind::Return && place.offset != 0) return fail(column, msg::kBadRetprobe);
    return std::nullopt;
  }

  MaybeError parse_argument(const Word& word, size_t index) {
    ProbeArgument argument;
    argument.text = std::string(word.text);
    argument.column = word.column;
    std::string_view body = word.text;
    size_t body_column = word.column;

    const size_t equals = body.find('=');
    if (equals != std::string_view::npos) {
      if (equals > kMaxArgumentNameLength) return fail(word.column, msg::kArgNameTooLong);
      if (equals == 0) return fail(word.column, msg::kNoArgName);
      argument.name = std::string(body.substr(0, equals));
      argument.name_given = true;
      body.remove_prefix(equals + 1);
      body_column += equals + 1;
    } else {
      argument.name = fmt::format("arg{}", index + 1);
    }
    if (!is_good_name(argument.name)) return fail(word.column, msg::kBadArgName);
    const bool reserved = std::find(kReservedNames.begin(), kReservedNames.end(), argument.name) != kReservedNames.end();
    const bool duplicate = std::any_of(definition_.arguments.begin(), definition_.arguments.end(),
                                       [&](const ProbeArgument& other) { return other.name == argument.name; });
    if (reserved || duplicate) return fail(word.column, msg::kUsedArgName);
    if (body.empty()) return fail(body_column, msg::kNoArgBody);

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
      argument.type.kind = TypeKind::String;
      argument.type.size = static_cast<uint8_t>(abi_.word_size);
    } else if (has_type) {
      const uint16_t count = argument.type.array_count;
      if (!parse_type(type_text, argument.type, bitfield_ok)) return fail(type_column, msg::kBadType);
      argument.type.array_count = count;
    } else {
      argument.type = default_fetch_type(abi_.word_size);
    }
    argument.type_given = has_type;

    if (auto error = parse_expression(expression_text, body_column, argument.expression)) return error;

    const FetchExpression& expression = argument.expression;
    const FetchSource::Kind source = expression.source.kind;
    const bool memory = expression.is_memory();
    if (argument.type.is_string()) {
      const bool direct = !memory && (source == FetchSource::Kind::Immediate || source == FetchSource::Kind::Comm ||
                                      source == FetchSource::Kind::ImmediateString);
      // string[N] reads N char* at the address: a dereference or an immediate address.
      const bool array_ok = memory || source == FetchSource::Kind::Immediate;
      if (!(memory || direct) || (argument.type.is_array() && !array_ok)) return fail(type_column, msg::kBadString);
    } else if (argument.type.kind == TypeKind::SymStr &&
               (source == FetchSource::Kind::Comm || source == FetchSource::Kind::ImmediateString)) {
      return fail(type_column, msg::kBadSymString);
    } else if (argument.type.is_array() && !memory) {
      return fail(type_column, msg::kBadString);
    }
    if (!bitfield_ok) return fail(type_column, msg::kBadBitfield);

    definition_.arguments.push_back(std::move(argument));
    return std::nullopt;
  }

  // Fills `type` from a type name (without [N]); `bitfield_ok` reports a bitfield whose
  // width/offset do not fit, which the kernel reports only after the expression.
  bool parse_type(std::string_view name, FetchType& type, bool& bitfield_ok) const {
    type = FetchType{};
    const auto word = static_cast<uint8_t>(abi_.word_size);
    if (name == "char") { type.kind = TypeKind::Char; type.size = 1; return true; }
    if (name == "string") { type.kind = TypeKind::String; type.size = word; return true; }
    if (name == "ustring") { type.kind = TypeKind::UString; type.size = word; return true; }
    if (name == "symbol") { type.kind = TypeKind::Symbol; type.size = word; return true; }
    if (name == "symstr") { type.kind = TypeKind::SymStr; type.size = word; return true; }
    if (name.empty()) return false;
    if (name[0] == 'b') {
      const size_t slash = name.find('/');
      if (slash == std::string_view::npos) return false;
      const auto container = parse_unsigned(name.substr(slash + 1));
      if (!container || (*container != 8 && *container != 16 && *container != 32 && *container != 64)) return false;
      type.kind = TypeKind::Bitfield;
      type.size = static_cast<uint8_t>(*container / 8);
      size_t consumed = 0;
      const std::string_view width_text = name.substr(1);
      const uint64_t width = parse_prefix_unsigned(width_text, consumed);
      if (width == 0 || consumed >= width_text.size() || width_text[consumed] != '@') {
        bitfield_ok = false;
        return true;
      }
      const std::string_view offset_text = width_text.substr(consumed + 1);
      size_t offset_consumed = 0;
      const uint64_t offset = parse_prefix_unsigned(offset_text, offset_consumed);
      if (offset_consumed == 0 || offset_consumed >= offset_text.size() || offset_text[offset_consumed] != '/' ||
          width + offset > *container) {
        bitfield_ok = false;
        return true;
      }
      type.bit_width = static_cast<uint8_t>(width);
      type.bit_offset = static_cast<uint8_t>(offset);
      return true;
    }
    if (name.size() < 2) return false;
    switch (name[0]) {
      case 'u': type.kind = TypeKind::Unsigned; break;
      case 's': type.kind = TypeKind::Signed; break;
      case 'x': type.kind = TypeKind::Hex; break;
      default: return false;
    }
    const std::string_view bits = name.substr(1);
    if (bits == "8") type.size = 1;
    else if (bits == "16") type.size = 2;
    else if (bits == "32") type.size = 4;
    else if (bits == "64") type.size = 8;
    else return false;
    return true;
  }

  MaybeError parse_expression(std::string_view text, size_t column, FetchExpression& out) const {
    std::vector<Dereference> outer_first;
    // Dereferences: +|-[u]OFFS(FETCHARG), peeled from the outside in.
    while (!text.empty() && (text[0] == '+' || text[0] == '-')) {
      if (outer_first.size() >= kMaxDereferenceDepth) return fail(column, msg::kTooManyOps);
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
      const auto offset = text[0] == '+' ? parse_signed(number) : parse_signed("-" + std::string(number));
      if (!offset) return fail(column, msg::kBadDerefOffs);
      deref.offset = *offset;
      const size_t close = text.rfind(')');
      const size_t inner_column = column + open + 1;
      if (close == std::string_view::npos || close < open) return fail(column + text.size(), msg::kDerefOpenBrace);
      if (close + 1 != text.size()) return fail(column + close + 1, msg::kBadFetchArg);
      outer_first.push_back(deref);
      text = text.substr(open + 1, close - open - 1);
      column = inner_column;
      if (text == "$comm" || text.substr(0, 2) == "\\\"") return fail(column, msg::kCommCantDeref);
    }
    out.derefs.assign(outer_first.rbegin(), outer_first.rend());
    return parse_source(text, column, out);
  }

  MaybeError parse_source(std::string_view text, size_t column, FetchExpression& out) const {
    FetchSource& source = out.source;
    if (text.empty()) return fail(column, msg::kBadFetchArg);
    switch (text[0]) {
      case '$': return parse_variable(text.substr(1), column, source);
      case '%': {
        const auto reg = find_register(abi_, text.substr(1));
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

  bool at_function_entry() const {
    return definition_.place.kind != ProbePlace::Kind::Symbol || definition_.place.offset == 0;
  }

  MaybeError parse_variable(std::string_view name, size_t column, FetchSource& source) const {
    if (name == "retval") {
      if (definition_.kind != ProbeKind::Return) return fail(column, msg::kRetvalOnProbe);
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

  static std::optional<uint64_t> parse_unsigned_decimal(std::string_view digits) {
    uint64_t value = 0;
    for (char c : digits) {
      if (value > (std::numeric_limits<uint64_t>::max() - 9) / 10) return std::nullopt;
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    return value;
  }

  MaybeError set_argument(uint64_t number, size_t column, FetchSource& source) const {
    if (number == 0 || number > kMaxArguments) return fail(column, msg::kBadArgNum);
    if (!at_function_entry()) return fail(column, msg::kNoFentryArgs);
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
          if (!number || *number >= abi_.block_order.size()) return fail(column, msg::kBadRegName);
          source.kind = FetchSource::Kind::Register;
          source.reg = static_cast<RegisterId>(*number);
          source.text = std::string(register_name(abi_, source.reg));
          return std::nullopt;
        default: break;
      }
    }
    return fail(column, msg::kBadFetchArg);
  }

  const ArchProbeAbi& abi_;
  std::string command_;
  std::vector<size_t> offsets_;
  std::vector<Word> words_;
  ProbeDefinition definition_;
};

std::string sanitize_identifier(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += (std::isalnum(u) || c == '_') ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
  if (out.size() > kMaxEventNameLength) out.resize(kMaxEventNameLength);
  return out;
}

}  // namespace

std::string derive_event_name(const ProbePlace& place, ProbeKind kind, const std::string& symbol) {
  switch (place.kind) {
    case ProbePlace::Kind::FileOffset: {
      // trace_uprobe: "p_" + basename cut at its first '.', '-' or '_' + "_0x%lx", for both p and r.
      std::string_view base = place.binary;
      const size_t slash = base.rfind('/');
      if (slash != std::string_view::npos) base.remove_prefix(slash + 1);
      base = base.substr(0, base.find_first_of(".-_"));
      return sanitize_identifier(fmt::format("p_{}_0x{:x}", base, place.address));
    }
    case ProbePlace::Kind::VirtualAddress:
      return fmt::format("{}_0x{:x}", kind == ProbeKind::Return ? 'r' : 'p', place.address);
    case ProbePlace::Kind::Symbol: break;
  }
  std::string name = symbol;
  if (kind == ProbeKind::Return) {
    name += "__return";
  } else if (place.offset != 0) {
    name += fmt::format("_{}", place.offset);
  }
  return sanitize_identifier(name);
}

ParseResult<ProbeDefinition> parse_definition(std::string_view text, const ParseOptions& options) {
  return DefinitionParser(text, options).parse();
}

ParseResult<std::vector<ProbeDefinition>> parse_definitions_file(std::string_view text, std::string_view file_name,
                                                                 const ParseOptions& options) {
  std::vector<ProbeDefinition> definitions;
  size_t line_number = 0;
  while (!text.empty() || line_number == 0) {
    ++line_number;
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    line = line.substr(0, line.find('#'));
    if (std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
      if (text.empty()) break;
      continue;
    }
    auto parsed = parse_definition(line, options);
    if (!parsed) {
      ParseError error = parsed.error();
      error.line = line_number;
      error.file = std::string(file_name);
      return error;
    }
    ProbeDefinition definition = std::move(parsed).value();
    definition.line = line_number;
    definitions.push_back(std::move(definition));
    if (text.empty()) break;
  }
  return definitions;
}

}  // namespace xprobe::probe
