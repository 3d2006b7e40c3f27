#include "probe/filter/event_filter.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "probe/kernel_numbers.h"

namespace xprobe::probe::filter {
namespace {

using agent::kMatchGlob;
using agent::kMatchPrefix;
using agent::kMatchSubstring;
using agent::kMatchSuffix;
using agent::string_matches;
using agent::compare_numbers;

// The kernel keeps at most this many characters of a number (its num_buf) and of a string.
constexpr size_t kNumberBuffer = 24;
constexpr size_t kMaxStringValue = 256;

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

FilterField number_field(std::string name, FieldSource source, uint8_t size, bool is_signed) {
  FilterField field;
  field.name = std::move(name);
  field.source = source;
  field.size = size;
  field.is_signed = is_signed;
  return field;
}

FilterField string_field(std::string name, FieldSource source) {
  FilterField field;
  field.name = std::move(name);
  field.source = source;
  field.is_string = true;
  return field;
}

// The kernel's operators, in the order it tries them ("<=" before "<").
struct OperatorText {
  std::string_view text;
  CompareOp op;
};
constexpr OperatorText kOperators[] = {
    {"~", CompareOp::Glob},       {"!=", CompareOp::NotEqual}, {"==", CompareOp::Equal},
    {"<=", CompareOp::LessEqual}, {"<", CompareOp::Less},      {">=", CompareOp::GreaterEqual},
    {">", CompareOp::Greater},    {"&", CompareOp::BitAnd},
};

struct Failure {
  std::string message;
  std::optional<size_t> position;
};

// The structure of the expression as the kernel's first pass sees it.
struct Token {
  enum class Kind : uint8_t { Open, Close, Not, Test, And, Or };
  Kind kind;
  uint32_t predicate = 0;
};

// calc_stack(): unbalanced parentheses and quotes, found before any predicate is read. Also
// counts the predicates as the kernel does (an upper bound it later checks against).
std::optional<Failure> check_structure(std::string_view s, size_t& predicate_count) {
  bool in_predicate = false;
  int open = 1;
  size_t last_quote = 0;
  char quote = 0;
  size_t i = 0;
  predicate_count = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (is_space(c)) continue;
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    switch (c) {
      case '\'':
      case '"':
        quote = c;
        last_quote = i;
        break;
      case '|':
      case '&':
        if (i + 1 >= s.size() || s[i + 1] != c) break;
        in_predicate = false;
        continue;
      case '(':
        in_predicate = false;
        ++open;
        continue;
      case ')':
        in_predicate = false;
        if (open == 1) return Failure{"Too few '('", i};
        --open;
        continue;
      default: break;
    }
    if (!in_predicate) {
      ++predicate_count;
      in_predicate = true;
    }
  }
  if (quote != 0) return Failure{"Missing matching quote", last_quote};
  if (open != 1) {
    // The '(' left open: walking back, the first '(' whose level is the final one.
    int level = open;
    for (size_t k = s.size() - 1; k > 0; --k) {
      if (quote != 0) {
        if (s[k] == quote) quote = 0;
        continue;
      }
      switch (s[k]) {
        case '(':
          if (level == open) return Failure{"Too many '('", k};
          --level;
          break;
        case ')': ++level; break;
        case '\'':
        case '"': quote = s[k]; break;
        default: break;
      }
    }
    return Failure{"Too many '('", 0};
  }
  return std::nullopt;
}

class Parser {
 public:
  Parser(std::string_view text, const std::vector<FilterField>& fields) : s_(text), fields_(fields) {}

  std::optional<Failure> run() {
    size_t counted = 0;
    if (auto failure = check_structure(s_, counted)) return failure;
    return scan(counted + 2);
  }
  std::vector<Token>& tokens() { return tokens_; }
  std::vector<Predicate>& predicates() { return predicates_; }

 private:
  char at(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }

  // predicate_parse()'s first pass: parentheses, '!', predicates and the && / || between them.
  std::optional<Failure> scan(size_t most_predicates) {
    size_t ptr = 0;
    int depth = 0;
    while (at(ptr) != '\0') {
      const size_t next = ptr++;
      const char c = s_[next];
      if (is_space(c)) continue;
      if (c == '(') {
        ++depth;
        tokens_.push_back({Token::Kind::Open});
        continue;
      }
      if (c == '!' && at(next + 1) != '=' && at(next + 1) != '~') {
        tokens_.push_back({Token::Kind::Not});
        continue;
      }
      if (predicates_.size() >= most_predicates) return Failure{"Too many terms in predicate expression", next};
      size_t length = 0;
      // The kernel passes the predicate's position plus one as its base.
      if (auto failure = parse_predicate(next, next + 1, length)) return failure;
      tokens_.push_back({Token::Kind::Test, static_cast<uint32_t>(predicates_.size() - 1)});
      ptr = next + length;
      for (;;) {
        const size_t here = ptr++;
        const char d = at(here);
        if (d != '\0' && is_space(d)) continue;
        if (d == '&' || d == '|') {
          if (at(here + 1) != d) return Failure{"Too many terms in predicate expression", here};
          ++ptr;
          tokens_.push_back({d == '&' ? Token::Kind::And : Token::Kind::Or});
          break;
        }
        if (d == '\0') return std::nullopt;
        if (d != ')') return Failure{"Too many terms in predicate expression", here};
        if (depth == 0) return Failure{"Too few '('", ptr};
        --depth;
        tokens_.push_back({Token::Kind::Close});
      }
    }
    if (depth != 0) return Failure{"Too many '('", ptr};
    if (predicates_.empty()) return Failure{"No filter found", ptr};
    return Failure{"Meaningless filter expression", ptr};
  }

  const FilterField* find_field(std::string_view name, uint32_t& index) const {
    for (uint32_t i = 0; i < fields_.size(); ++i) {
      if (fields_[i].name == name) {
        index = i;
        return &fields_[i];
      }
    }
    return nullptr;
  }

  // parse_pred(): one `FIELD OP VALUE` at `start`; errors at `base` + the offset the kernel
  // uses. `length` gets how many characters it took.
  std::optional<Failure> parse_predicate(size_t start, size_t base, size_t& length) {
    size_t i = 0;
    auto c = [&](size_t k) { return at(start + k); };
    auto fail = [&](const char* message, size_t offset) { return Failure{message, base + offset}; };
    while (c(i) != '\0' && is_space(c(i))) ++i;
    const size_t name_start = i;
    while (c(i) != '\0' && (is_alnum(c(i)) || c(i) == '_')) ++i;
    if (i == name_start) return Failure{"Error: (0)", std::nullopt};  // the kernel's -EPERM without a message
    uint32_t field_index = 0;
    const FilterField* field = find_field(s_.substr(start + name_start, i - name_start), field_index);
    if (field == nullptr) return fail("Field not found", i);
    while (c(i) != '\0' && is_space(c(i))) ++i;
    const OperatorText* op = nullptr;
    for (const OperatorText& candidate : kOperators) {
      if (s_.substr(start + i).starts_with(candidate.text)) {
        op = &candidate;
        break;
      }
    }
    if (op == nullptr) return fail("Invalid operator", i);
    i += op->text.size();
    while (c(i) != '\0' && is_space(c(i))) ++i;
    Predicate predicate;
    predicate.field = field_index;
    predicate.op = op->op;
    const size_t value_start = i;
    if (c(i) == '\'' || c(i) == '"') {
      const char quote = c(i);
      if (op->op != CompareOp::Equal && op->op != CompareOp::NotEqual && op->op != CompareOp::Glob)
        return fail("Illegal operation for field type", i);
      if (!field->is_string) return fail("Expecting numeric field", i);
      for (++i; c(i) != '\0' && c(i) != quote; ++i) {
      }
      if (c(i) == '\0') return fail("Missing matching quote", i);
      const size_t text_length = i - value_start - 1;
      if (text_length >= kMaxStringValue) return fail("Operand too long", i);
      std::string_view pattern = s_.substr(start + value_start + 1, text_length);
      ++i;
      predicate.negate = op->op == CompareOp::NotEqual;
      predicate.match = kMatchFull;
      if (op->op == CompareOp::Glob) set_glob(pattern, predicate);
      else predicate.pattern = std::string(pattern);
    } else if (is_digit(c(i)) || c(i) == '-') {
      if (field->is_string) return fail("Expecting string field", i);
      if (op->op == CompareOp::Glob) return fail("Illegal operation for field type", i);
      if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8)
        return fail("Illegal operation for field type", i);
      if (c(i) == '-') ++i;
      while (c(i) != '\0' && is_alnum(c(i))) ++i;
      if (i - value_start >= kNumberBuffer) return fail("Operand too long", i);
      const std::string_view digits = s_.substr(start + value_start, i - value_start);
      if (field->is_signed) {
        const auto value = parse_signed(digits);
        if (!value) return fail("Illegal integer value", value_start);
        predicate.number = static_cast<uint64_t>(*value);
      } else {
        const auto value = parse_unsigned(digits);
        if (!value) return fail("Illegal integer value", value_start);
        predicate.number = *value;
      }
    } else {
      return fail("Invalid value (did you forget quotes)?", i);
    }
    predicates_.push_back(std::move(predicate));
    length = i;
    return std::nullopt;
  }

  // filter_parse_regex(): a leading '!' negates; the '*' at either end choose the match.
  static void set_glob(std::string_view pattern, Predicate& predicate) {
    predicate.negate = false;
    if (!pattern.empty() && pattern.front() == '!') {
      predicate.negate = true;
      pattern.remove_prefix(1);
    }
    StringMatch match = kMatchFull;
    bool cut_end = false;
    if (!pattern.empty() && !is_digit(pattern.front())) {
      for (size_t i = 0; i < pattern.size(); ++i) {
        const char ch = pattern[i];
        if (ch == '*') {
          if (i == 0) {
            match = kMatchSuffix;
          } else if (i == pattern.size() - 1) {
            match = match == kMatchSuffix ? kMatchSubstring : kMatchPrefix;
            cut_end = true;
            break;
          } else {
            match = kMatchGlob;
            break;
          }
        } else if (ch == '[' || ch == '?' || ch == '\\') {
          match = kMatchGlob;
          break;
        }
      }
    }
    if (match != kMatchGlob) {
      if (cut_end) pattern.remove_suffix(1);
      if (!pattern.empty() && pattern.front() == '*') pattern.remove_prefix(1);
    }
    predicate.match = match;
    predicate.pattern = std::string(pattern);
  }

  std::string_view s_;
  const std::vector<FilterField>& fields_;
  std::vector<Token> tokens_;
  std::vector<Predicate> predicates_;
};

// The scanned tokens in postfix, with C's precedence (&& before ||, '!' on what follows).
class PostfixBuilder {
 public:
  explicit PostfixBuilder(const std::vector<Token>& tokens) : tokens_(tokens) {}
  std::vector<FilterStep> build() {
    expression();
    return std::move(out_);
  }

 private:
  bool next_is(Token::Kind kind) const { return at_ < tokens_.size() && tokens_[at_].kind == kind; }
  void expression() {
    conjunction();
    while (next_is(Token::Kind::Or)) {
      ++at_;
      conjunction();
      out_.push_back({FilterStep::Kind::Or});
    }
  }
  void conjunction() {
    unary();
    while (next_is(Token::Kind::And)) {
      ++at_;
      unary();
      out_.push_back({FilterStep::Kind::And});
    }
  }
  void unary() {
    if (at_ >= tokens_.size()) return;
    const Token token = tokens_[at_++];
    switch (token.kind) {
      case Token::Kind::Not:
        unary();
        out_.push_back({FilterStep::Kind::Not});
        return;
      case Token::Kind::Open:
        expression();
        if (next_is(Token::Kind::Close)) ++at_;
        return;
      case Token::Kind::Test: out_.push_back({FilterStep::Kind::Test, token.predicate}); return;
      default: return;
    }
  }
  const std::vector<Token>& tokens_;
  size_t at_ = 0;
  std::vector<FilterStep> out_;
};

uint64_t number_of(const FetchedValue& value, uint8_t size) {
  if (value.numbers.size() <= 1) return value.numbers.empty() ? 0 : value.numbers.front();
  // An array is compared as one integer of all its elements, little-endian, as the kernel
  // compares its field's bytes.
  const unsigned element_bits = 8u * static_cast<unsigned>(size / value.numbers.size());
  uint64_t combined = 0;
  for (size_t k = 0; k < value.numbers.size() && element_bits * k < 64; ++k) {
    const uint64_t element = element_bits >= 64 ? value.numbers[k] : value.numbers[k] & ((uint64_t{1} << element_bits) - 1);
    combined |= element << (element_bits * k);
  }
  return combined;
}

}  // namespace

std::vector<FilterField> event_fields(std::span<const std::string> argument_names,
                                      std::span<const FetchType> argument_types, bool is_return) {
  std::vector<FilterField> fields;
  if (is_return) {
    fields.push_back(number_field("__probe_func", FieldSource::ProbeAddress, 8, false));
    fields.push_back(number_field("__probe_ret_ip", FieldSource::ReturnAddress, 8, false));
  } else {
    fields.push_back(number_field("__probe_ip", FieldSource::ProbeAddress, 8, false));
  }
  for (size_t i = 0; i < argument_names.size() && i < argument_types.size(); ++i) {
    const FetchType& type = argument_types[i];
    FilterField field;
    field.name = argument_names[i];
    field.argument = static_cast<uint32_t>(i);
    field.type = type;
    field.is_string = type.is_string() && !type.is_array();
    const unsigned elements = type.is_array() ? type.array_count : 1;
    // A string array is no string field and no number the kernel could compare.
    field.size = type.is_string() ? 0 : static_cast<uint8_t>(std::min(255u, unsigned{type.size} * elements));
    field.is_signed = type.traits().is_signed && !type.is_array();
    fields.push_back(std::move(field));
  }
  fields.push_back(number_field("CPU", FieldSource::Cpu, 4, true));
  fields.push_back(number_field("cpu", FieldSource::Cpu, 4, true));
  fields.push_back(number_field("common_cpu", FieldSource::Cpu, 4, true));
  fields.push_back(string_field("COMM", FieldSource::Comm));
  fields.push_back(string_field("comm", FieldSource::Comm));
  fields.push_back(number_field("common_type", FieldSource::Zero, 2, false));
  fields.push_back(number_field("common_flags", FieldSource::Zero, 1, false));
  fields.push_back(number_field("common_preempt_count", FieldSource::Zero, 1, false));
  fields.push_back(number_field("common_pid", FieldSource::ThreadId, 4, true));
  return fields;
}

FieldValue field_value(const FilterField& field, const FilterInputs& inputs) {
  FieldValue out;
  out.is_string = field.is_string;
  const FetchedValue* value =
      field.source == FieldSource::Argument && field.argument < inputs.values.size() ? &inputs.values[field.argument] : nullptr;
  if (field.is_string) {
    if (field.source == FieldSource::Comm) out.text = inputs.comm;
    else if (value != nullptr && !value->strings.empty() && value->strings.front()) out.text = *value->strings.front();
    return out;
  }
  switch (field.source) {
    case FieldSource::Argument: out.number = value != nullptr ? number_of(*value, field.size) : 0; break;
    case FieldSource::ThreadId: out.number = static_cast<uint64_t>(inputs.tid); break;
    case FieldSource::Cpu: out.number = inputs.cpu; break;
    case FieldSource::ProbeAddress: out.number = inputs.probe_address; break;
    case FieldSource::ReturnAddress: out.number = inputs.return_address; break;
    case FieldSource::Comm:
    case FieldSource::Zero: break;
  }
  out.number = agent::number_at_size(out.number, field.size, field.is_signed);
  return out;
}

const FilterField* find_field(const std::vector<FilterField>& fields, std::string_view name) {
  for (const FilterField& field : fields)
    if (field.name == name) return &field;
  return nullptr;
}

bool EventFilter::predicate_holds(const Predicate& predicate, const FilterInputs& inputs) const {
  const FilterField& field = fields_[predicate.field];
  const FieldValue value = field_value(field, inputs);
  if (field.is_string) {
    const bool matched = string_matches(predicate.match, predicate.pattern.data(),
                                        static_cast<uint32_t>(predicate.pattern.size()), value.text.data(),
                                        static_cast<uint32_t>(value.text.size()));
    return matched != predicate.negate;
  }
  return compare_numbers(predicate.op, value.number, predicate.number, field.size, field.is_signed);
}

bool EventFilter::matches(const FilterInputs& inputs) const {
  // Postfix over a stack of bits (the parser bounds the depth by the number of predicates).
  std::vector<bool> stack;
  stack.reserve(program_.size());
  for (const FilterStep& step : program_) {
    switch (step.kind) {
      case FilterStep::Kind::Test: stack.push_back(predicate_holds(predicates_[step.predicate], inputs)); break;
      case FilterStep::Kind::Not:
        if (!stack.empty()) stack.back() = !stack.back();
        break;
      case FilterStep::Kind::And:
      case FilterStep::Kind::Or: {
        if (stack.size() < 2) return false;
        const bool right = stack.back();
        stack.pop_back();
        stack.back() = step.kind == FilterStep::Kind::And ? (stack.back() && right) : (stack.back() || right);
        break;
      }
    }
  }
  return stack.size() == 1 && stack.back();
}

std::string FilterError::render() const {
  std::string out = text + "\n";
  if (!position) return out + message + "\n";
  out += std::string(std::min(*position, text.size()), ' ') + "^\n";
  return out + "parse_error: " + message + "\n";
}

std::string FilterError::filter_file_text() const { return render() + "\n"; }

std::string FilterError::error_log_entry(double seconds) const {
  const auto whole = static_cast<unsigned long>(seconds);
  const auto micros = static_cast<unsigned long>(std::llround((seconds - static_cast<double>(whole)) * 1e6)) % 1000000ul;
  // Where the kernel has no message (an empty filter) its log says "Error", the caret at 0.
  const std::string said = position ? message : std::string("Error");
  constexpr std::string_view kCommand = "  Command: ";
  return fmt::format("[{:5}.{:06}] event filter parse error: error: {}\n{}{}\n{}^\n", whole, micros, said, kCommand, text,
                     std::string(kCommand.size() + log_position.value_or(0), ' '));
}

bool clears_filter(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\n\r\f\v");
  if (first == std::string_view::npos) return false;
  const size_t last = text.find_last_not_of(" \t\n\r\f\v");
  return text.substr(first, last - first + 1) == "0";
}

FilterResult parse_event_filter(std::string_view text, std::vector<FilterField> fields) {
  const size_t last = text.find_last_not_of(" \t\n\r\f\v");
  const std::string trimmed(last == std::string_view::npos ? std::string_view{} : text.substr(0, last + 1));
  Parser parser(trimmed, fields);
  // An empty filter is refused without a message, as the kernel refuses it.
  if (trimmed.empty()) return FilterError{trimmed, "Error: (0)", std::nullopt, std::nullopt};
  if (auto failure = parser.run()) {
    std::optional<size_t> position;
    if (failure->position) position = std::min(*failure->position, trimmed.size());
    return FilterError{trimmed, std::move(failure->message), position, failure->position};
  }
  std::vector<FilterStep> program = PostfixBuilder(parser.tokens()).build();
  return EventFilter(trimmed, std::move(fields), std::move(parser.predicates()), std::move(program));
}

}  // namespace xprobe::probe::filter
