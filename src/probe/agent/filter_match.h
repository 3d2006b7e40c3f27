#pragma once
// How the kernel's event filter compares a field with a predicate's operand
// (kernel/trace/trace_events_filter.c). Numbers: cut to the field's size (sign-extended when
// signed), then == != < <= > >= or & (any common bit). Strings: matched against the text of `==`, `!=` and
// `~` (kernel/trace/trace_events_filter.c, filter_build_regex): `==`/`!=` compare the whole
// string; `~` looks at where its '*' are: "abc" the whole string, "abc*" a prefix, "*abc" a
// suffix, "*abc*" a substring, anything else (a '*' inside, '?', '[', '\') a shell glob; a
// leading '!' negates the match.
//
// Freestanding (no library, no allocation): the in-process agent evaluates filters with it and
// so does the tracer (probe/filter), so both agree by construction.
#include <stdint.h>

namespace xprobe::agent {

enum class CompareOp : uint8_t { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, BitAnd, Glob };

// A number as the kernel compares it: cut to `size` bytes, sign-extended when signed.
inline uint64_t number_at_size(uint64_t value, uint8_t size, bool is_signed) {
  if (size >= 8 || size == 0) return value;
  const unsigned bits = 8u * size;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  value &= mask;
  if (is_signed && (value >> (bits - 1)) != 0) value |= ~mask;
  return value;
}

inline bool compare_numbers(CompareOp op, uint64_t field, uint64_t operand, uint8_t size, bool is_signed) {
  const uint64_t a = number_at_size(field, size, is_signed), b = number_at_size(operand, size, is_signed);
  const auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (op) {
    case CompareOp::Equal: return a == b;
    case CompareOp::NotEqual: return a != b;
    case CompareOp::Less: return is_signed ? sa < sb : a < b;
    case CompareOp::LessEqual: return is_signed ? sa <= sb : a <= b;
    case CompareOp::Greater: return is_signed ? sa > sb : a > b;
    case CompareOp::GreaterEqual: return is_signed ? sa >= sb : a >= b;
    case CompareOp::BitAnd: return (a & b) != 0;
    case CompareOp::Glob: return false;
  }
  return false;
}

enum StringMatch : uint8_t {
  kMatchFull = 0,
  kMatchPrefix = 1,
  kMatchSuffix = 2,
  kMatchSubstring = 3,
  kMatchGlob = 4,
};

// The glob of the kernel's lib/glob.c: * ? [abc] [a-z] [!x], '\' quotes the next character.
inline bool glob_matches(const char* pattern, uint32_t pattern_length, const char* text, uint32_t text_length) {
  uint32_t p = 0, t = 0;
  uint32_t star_p = 0xffffffffu, star_t = 0;
  while (t < text_length) {
    if (p < pattern_length) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        uint32_t i = p + 1;
        bool negate = false;
        if (i < pattern_length && pattern[i] == '!') {
          negate = true;
          ++i;
        }
        bool found = false, first = true;
        const char c = text[t];
        while (i < pattern_length && (first || pattern[i] != ']')) {
          first = false;
          const char lo = pattern[i];
          char hi = lo;
          if (i + 2 < pattern_length && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
            hi = pattern[i + 2];
            i += 3;
          } else {
            ++i;
          }
          if (static_cast<unsigned char>(lo) <= static_cast<unsigned char>(c) &&
              static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi))
            found = true;
        }
        if (i < pattern_length) {  // a closed class
          if (found != negate) {
            p = i + 1;
            ++t;
            continue;
          }
        } else if (c == '[') {  // no closing bracket: a literal '['
          ++p;
          ++t;
          continue;
        }
      } else {
        char literal = pc;
        uint32_t width = 1;
        if (pc == '\\' && p + 1 < pattern_length) {
          literal = pattern[p + 1];
          width = 2;
        }
        if (literal == text[t]) {
          p += width;
          ++t;
          continue;
        }
      }
    }
    if (star_p == 0xffffffffu) return false;
    p = star_p + 1;
    t = ++star_t;
  }
  while (p < pattern_length && pattern[p] == '*') ++p;
  return p == pattern_length;
}

inline bool bytes_equal(const char* a, const char* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Whether `text` matches `pattern` (already stripped of its '*' and '!' by the parser) the
// way `match` says.
inline bool string_matches(StringMatch match, const char* pattern, uint32_t pattern_length, const char* text,
                           uint32_t text_length) {
  switch (match) {
    case kMatchFull: return text_length == pattern_length && bytes_equal(text, pattern, pattern_length);
    case kMatchPrefix: return text_length >= pattern_length && bytes_equal(text, pattern, pattern_length);
    case kMatchSuffix:
      return text_length >= pattern_length && bytes_equal(text + (text_length - pattern_length), pattern, pattern_length);
    case kMatchSubstring:
      if (pattern_length > text_length) return false;
      for (uint32_t at = 0; at + pattern_length <= text_length; ++at)
        if (bytes_equal(text + at, pattern, pattern_length)) return true;
      return false;
    case kMatchGlob: return glob_matches(pattern, pattern_length, text, text_length);
  }
  return false;
}

}  // namespace xprobe::agent
