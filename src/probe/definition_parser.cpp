#include "probe/definition_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <optional>
#include <string>

#include "probe/fetcharg_parser.h"
#include "probe/kernel_messages.h"
#include "probe/kernel_numbers.h"

namespace xprobe::probe {
namespace {

struct Word {
  std::string_view text;
  size_t column;
};

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
    if (definition_.kind == ProbeKind::Delete) {
      for (size_t i = 1; i < words_.size(); ++i) definition_.delete_match.emplace_back(words_[i].text);
      return std::move(definition_);
    }
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
    return parse_error_at(command_, column, message);
  }

  // p[:[GRP/]EVENT], r[MAXACTIVE][:[GRP/]EVENT], -:[GRP/]EVENT
  //
  // The kernel's uprobe parser looks only at the first character and, when the second is
  // ':', takes the name after it: anything else between the type and the ':' ("r16:",
  // "p5:", "pfoo") is accepted and ignored, and then it names the event itself (drops the
  // name). xprobe accepts the same heads but keeps the name the user wrote, and a number
  // after 'r' up to KRETPROBE_MAXACTIVE_MAX bounds the outstanding return frames as a
  // kretprobe's maxactive does (uretprobes have no such bound in the kernel).
  MaybeError parse_head(const Word& word) {
    const std::string_view head = word.text;
    const char type = head[0];
    if (type != 'p' && type != 'r' && type != '-') return fail(word.column, msg::kBadProbeType);
    definition_.kind = type == 'p' ? ProbeKind::Entry : type == 'r' ? ProbeKind::Return : ProbeKind::Delete;
    const size_t colon = head.find(':');
    const std::string_view between = head.substr(1, colon == std::string_view::npos ? std::string_view::npos : colon - 1);
    if (type == '-' && !between.empty()) return fail(word.column + 1, msg::kBadProbeType);
    if (type == '-' && colon == std::string_view::npos) return fail(word.column + 1, msg::kNoEventName);
    if (type == 'r' && all_digits(between)) {
      const auto maxactive = parse_unsigned(between);
      if (maxactive && *maxactive <= kMaxActive) definition_.maxactive = static_cast<unsigned>(*maxactive);
    }
    if (colon == std::string_view::npos) return std::nullopt;
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
      definition_.group_given = true;
      group_given = true;
      name.remove_prefix(slash + 1);
      column += slash + 1;
    }
    if (name.empty()) {
      // "p:GROUP/" keeps the generated event name, "-:GROUP/" deletes every event of the
      // group (as the kernel's dyn_event_release()); "p:" and "-:" name nothing.
      if (!group_given) return fail(column, msg::kNoEventName);
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
      // The caret at the start of the place, where the kernel puts it for "hoge-fuga" and
      // "hoge+1000-1000" (the whole place is what it could not read).
      if (!offset) return fail(rest_column, msg::kBadProbeAddr);
      place.offset = *offset;
    }
    place.symbol = std::string(symbol);
    place.is_glob = symbol.find_first_of("*?[") != std::string_view::npos;
    if (definition_.kind == ProbeKind::Return && place.offset != 0) return fail(column, msg::kBadRetprobe);
    return std::nullopt;
  }

  MaybeError parse_argument(const Word& word, size_t index) {
    const FetchArgContext context{
        abi_, definition_.kind,
        definition_.place.kind != ProbePlace::Kind::Symbol || definition_.place.offset == 0, command_};
    auto argument = parse_fetch_argument(word.text, word.column, index, definition_.arguments, context);
    if (!argument) return argument.error();
    definition_.arguments.push_back(std::move(argument).value());
    return std::nullopt;
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
