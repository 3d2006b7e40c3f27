// Values the optimiser splits or only knows from the function's entry, for the DWARF
// operations DW_OP_piece and DW_OP_entry_value (built with -g -O2; the tests check the
// operations are really there). Output: one line, the sum, so the calls are not folded away.
#include <stdio.h>
#include <stdlib.h>

struct pair {
  long key;
  long value;
};

struct packed_pair {
  int low;
  int high;
  long rest;
};

// `entry` arrives in two registers: DW_OP_reg* DW_OP_piece 8 DW_OP_reg* DW_OP_piece 8.
__attribute__((noinline)) long pick(struct pair entry, int which) {
  if (which) return entry.value * 3;
  return entry.key + 1;
}

// `packed.high` is the upper half of the first register piece.
__attribute__((noinline)) long unpack(struct packed_pair packed) { return packed.low + packed.rest * 2; }

static int counter;
__attribute__((noinline)) void bump(int amount) { counter += amount; }

// Inlined twice into outer(): at the second copy outer's `x` is only DW_OP_entry_value(the
// first argument register), which the first copy's call has overwritten.
static inline int scale(int value, int factor) {
  bump(factor);
  return value * factor;
}
__attribute__((noinline)) int outer(int x, int y) { return scale(x, y) + scale(y, 2); }

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 1;
  long total = 0;
  for (int i = 0; i < rounds; ++i) {
    struct pair entry = {i * 10 + 1, i * 100 + 7};
    struct packed_pair packed = {i - 3, i + 5, 1000 + i};
    total += pick(entry, i & 1) + unpack(packed) + outer(i, rounds);
  }
  printf("%ld %d\n", total, counter);
  return 0;
}
