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

static int main_done;

// Its ticks come in the first milliseconds; then it stays (sleeping) until the main thread is
// done, so that the program has two threads for as long as it runs (under emulation, in the
// AArch64 VM, a helper gone after its ticks could be gone before a test attaches).
static void* spin(void* argument) {
  (void)argument;
  long n = 0;
  for (int i = 0; i < 300; ++i) {
    n = tick(n);
    if (i % 10 == 0) pause_briefly();
  }
  while (!__atomic_load_n(&main_done, __ATOMIC_ACQUIRE)) pause_briefly();
  return (void*)n;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 400;
  pthread_t helper;
  pthread_create(&helper, NULL, spin, NULL);
  long n = 0;
  for (int i = 0; i < rounds; ++i) {
    n = tick(n);
    pause_briefly();
  }
  __atomic_store_n(&main_done, 1, __ATOMIC_RELEASE);
  void* helper_result;
  pthread_join(helper, &helper_result);
  printf("ticks=%ld helper=%ld\n", n, (long)helper_result);
  return 0;
}
