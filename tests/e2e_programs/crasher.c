// Crashes on its own (SIGSEGV) after calling a probed function a few times.
#include <stdio.h>

__attribute__((noinline)) int work(int* p, int x) { return *p + x; }

int main(void) {
  int value = 1;
  int total = 0;
  for (int i = 0; i < 3; ++i) total += work(&value, i);
  printf("total=%d\n", total);
  fflush(stdout);
  volatile int* volatile nowhere = 0;
  return work((int*)nowhere, 0);
}
