// longjmp out of probed functions that are several frames deep.
#include <setjmp.h>
#include <stdio.h>

static jmp_buf escape;

__attribute__((noinline)) int dive(int depth, int bail_at) {
  if (depth == bail_at) longjmp(escape, depth + 1);
  if (depth == 0) return 1;
  return dive(depth - 1, bail_at) + 1;
}

__attribute__((noinline)) int leaf(int x) { return x * 3; }

int main(void) {
  long total = 0;
  for (int round = 0; round < 20; ++round) {
    int jumped = setjmp(escape);
    if (jumped == 0) {
      total += dive(8, round % 3 == 0 ? 2 : -1);
    } else {
      total += 100 * jumped;
    }
    total += leaf(round);
  }
  printf("total=%ld\n", total);
  return 0;
}
