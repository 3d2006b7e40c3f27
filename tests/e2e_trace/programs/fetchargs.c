// Functions with every kind of argument a fetch program reads: integers of each width, more
// arguments than registers, strings, a struct with bitfields and an array, globals, a bad
// pointer. Deterministic output for the untraced/traced comparison.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record {
  int id;
  unsigned flags : 3;
  unsigned mode : 5;
  unsigned : 0;  // name starts at the next unsigned: offset 8, as the probes below expect
  char name[16];
  const char *label;
  long values[4];
};

long counter_global = 7;
const char *greeting_global = "hello-global";

__attribute__((noinline)) long many_args(long a, long b, long c, long d, long e, long f, long g, long h) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

__attribute__((noinline)) int take_record(const struct record *r) {
  return r->id + (int)r->flags + (int)r->mode + (int)strlen(r->name) + (int)r->values[3];
}

__attribute__((noinline)) size_t take_string(const char *s, signed char small, short medium) {
  return strlen(s) + (size_t)(small + medium + 1000);
}

__attribute__((noinline)) long recurse(long depth) { return depth <= 0 ? 0 : depth + recurse(depth - 1); }

// Never dereferences its argument: a probe that does must report a fault, not crash anyone.
__attribute__((noinline)) int keep_pointer(const char *maybe_bad) { return maybe_bad != NULL; }

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  long total = 0;
  for (int i = 0; i < rounds; ++i) {
    struct record r = {.id = 100 + i, .flags = (unsigned)(i & 7), .mode = 17, .label = "label"};
    snprintf(r.name, sizeof r.name, "rec-%d", i);
    for (int k = 0; k < 4; ++k) r.values[k] = (long)(i * 10 + k);
    total += many_args(i, -2, 3, -4, 5, -6, 70 + i, 0x7fffffff00L + i);
    total += take_record(&r);
    total += (long)take_string(i % 2 ? "odd string" : "even", (signed char)(-5 - i), (short)(-300 * (i + 1)));
    total += recurse(4);
    total += keep_pointer((const char *)(unsigned long)(0x10 + i));
    counter_global += i;
  }
  printf("total=%ld counter=%ld\n", total, counter_global);
  return (int)(total % 100);
}
