// AAPCS64 beyond the argument registers: ten_args() takes ten longs, x0..x7 carry the first
// eight and the stack (at sp on entry, 8 bytes each) the ninth and tenth. Deterministic output.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long ten_args(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 3;
  long total = 0;
  for (int k = 0; k < rounds; ++k) total += ten_args(k, 1, 2, 3, 4, 5, 6, 7, 900 + k, -1000 - k);
  printf("total=%ld\n", total);
  return (int)(total & 63);
}
