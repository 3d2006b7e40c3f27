#pragma once
// The ELF reader fuzzer's body, shared by the libFuzzer target and the mutated-corpus replay
// test in tests/torture: the bytes become a file, ElfFile::open reads it, and every accessor
// is exercised on whatever it accepted. Malformed input must give an error value with a
// one-line message, never a crash or an out-of-bounds read (ASan/UBSan watch).
#include <cstddef>
#include <cstdint>
#include <string>

namespace xprobe::fuzz {

struct ElfOpenOutcome {
  bool opened = false;
  std::string error;        // the message when not opened
  size_t symbols = 0;       // when opened
  size_t bytes_touched = 0; // function/section bytes read back (so the reads cannot be elided)
};

// Aborts when an invariant of the reader breaks (a span outside the file, a multi-line error).
ElfOpenOutcome open_one_elf(const uint8_t* data, size_t size);

}  // namespace xprobe::fuzz
