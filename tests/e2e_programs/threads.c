// Eight threads hitting the same functions, CALLS times each (argv[1], 2000 by default: the
// AArch64 VM's tests use fewer, a breakpoint stop costing ~1 ms under emulation).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long calls = 2000;

__attribute__((noinline)) long work(long x) { return x * 7 + 1; }

__attribute__((noinline)) long step(long acc, long i) { return acc + work(i); }

static void* run(void* argument) {
  long id = (long)argument;
  long acc = 0;
  for (long i = 0; i < calls; ++i) acc = step(acc, i + id);
  return (void*)acc;
}

int main(int argc, char** argv) {
  if (argc > 1) calls = atol(argv[1]);
  pthread_t threads[8];
  for (long i = 0; i < 8; ++i) pthread_create(&threads[i], NULL, run, (void*)i);
  long total = 0;
  for (int i = 0; i < 8; ++i) {
    void* result;
    pthread_join(threads[i], &result);
    total += (long)result;
  }
  printf("total=%ld\n", total);
  return 0;
}
