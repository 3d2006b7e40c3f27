#include "elf/symbol_glob.h"

#include <gtest/gtest.h>

using xprobe::elf::glob_match;
using xprobe::elf::has_glob_characters;

TEST(SymbolGlob, Literals) {
  EXPECT_TRUE(glob_match("open", "open"));
  EXPECT_FALSE(glob_match("open", "open64"));
  EXPECT_FALSE(glob_match("open64", "open"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "x"));
}

TEST(SymbolGlob, Star) {
  EXPECT_TRUE(glob_match("str*", "strlen"));
  EXPECT_TRUE(glob_match("str*", "str"));
  EXPECT_FALSE(glob_match("str*", "memstr"));
  EXPECT_TRUE(glob_match("*str*", "memstr_x"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
  EXPECT_TRUE(glob_match("*_r", "getpwnam_r"));
}

TEST(SymbolGlob, QuestionAndClasses) {
  EXPECT_TRUE(glob_match("mem?py", "memcpy"));
  EXPECT_FALSE(glob_match("mem?py", "memmpyy"));
  EXPECT_TRUE(glob_match("[fm]alloc", "malloc"));
  EXPECT_FALSE(glob_match("[fm]alloc", "calloc"));
  EXPECT_TRUE(glob_match("str[a-c]*", "strcat"));
  EXPECT_FALSE(glob_match("str[!a-c]*", "strcat"));
  EXPECT_TRUE(glob_match("str[!a-c]*", "strlen"));
}

TEST(SymbolGlob, DetectsGlobCharacters) {
  EXPECT_TRUE(has_glob_characters("str*"));
  EXPECT_TRUE(has_glob_characters("a?"));
  EXPECT_TRUE(has_glob_characters("[ab]"));
  EXPECT_FALSE(has_glob_characters("std::vector<int>::push_back"));
}
