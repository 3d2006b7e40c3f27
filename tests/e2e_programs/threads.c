// Eight threads hitting the same functions.
#include <pthread.h>
#include <stdio.h>

__attribute__((noinline)) long work(long x) { return x * 7 + 1; }

__attribute__((noinline)) long step(long acc, long i) { return acc + work(i); }

static void* run(void* argument) {
  long id = (long)argument;
  long acc = 0;
  for (long i = 0; i < 2000; ++i) acc = step(acc, i + id);
  return (void*)acc;
}

int main(void) {
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
