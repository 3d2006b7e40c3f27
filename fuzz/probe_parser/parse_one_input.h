#pragma once
// The probe-definition fuzzer's body, shared by the libFuzzer target and the corpus-replay
// test: parse the input as one definition and as a -f file for every architecture, compile
// what parses, run it against a hostile fake process, and check the parser's invariants.
#include <cstddef>
#include <cstdint>

namespace xprobe::fuzz {

// Returns normally or aborts (an invariant broke).
void parse_one_input(const uint8_t* data, size_t size);

}  // namespace xprobe::fuzz
