// Hits two probed functions as fast as it can: more events than a slow reader or a tiny
// disk can take. Usage: flood [N]
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long hit_a(long x) { return x + 1; }
__attribute__((noinline)) long hit_b(long x) { return x ^ 0x55; }

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 20000;
  long total = 0;
  for (long i = 0; i < n; ++i) {
    total += hit_a(i);
    if (i % 3 == 0) total += hit_b(i);
  }
  printf("total=%ld\n", total);
  return 0;
}
