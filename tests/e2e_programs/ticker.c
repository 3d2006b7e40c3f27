// Runs for a while (for attach and detach while busy), several threads.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long tick(long x) { return x + 1; }

static void pause_briefly(void) {
  struct timespec delay = {0, 2 * 1000 * 1000};
  nanosleep(&delay, NULL);
}

// As long as the main thread: under emulation (the AArch64 VM) a short-lived helper could be
// gone before a test attaches.
static void* spin(void* argument) {
  const long rounds = (long)argument;
  long n = 0;
  for (long i = 0; i < rounds; ++i) {
    n = tick(n);
    pause_briefly();
  }
  return (void*)n;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 400;
  pthread_t helper;
  pthread_create(&helper, NULL, spin, (void*)(long)rounds);
  long n = 0;
  for (int i = 0; i < rounds; ++i) {
    n = tick(n);
    pause_briefly();
  }
  void* helper_result;
  pthread_join(helper, &helper_result);
  printf("ticks=%ld helper=%ld\n", n, (long)helper_result);
  return 0;
}
