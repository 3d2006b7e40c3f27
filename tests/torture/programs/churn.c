// Threads created and joined in waves while every one calls a probed function: probes are
// hit while threads are being created and exit. Output: a deterministic total.
// Usage: churn [WAVES] [THREADS_PER_WAVE] [CALLS_PER_THREAD]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int calls_per_thread = 2000;

__attribute__((noinline)) long work(long x) { return x * 7 % 1009 + 1; }

static void* worker(void* argument) {
  long seed = (long)argument, total = 0;
  for (int i = 0; i < calls_per_thread; ++i) {
    total += work(seed + i);
    if (i % 500 == 0) {
      struct timespec pause = {0, 200 * 1000};
      nanosleep(&pause, NULL);
    }
  }
  return (void*)total;
}

int main(int argc, char** argv) {
  const int waves = argc > 1 ? atoi(argv[1]) : 20;
  const int threads = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3) calls_per_thread = atoi(argv[3]);
  long total = 0;
  for (int wave = 0; wave < waves; ++wave) {
    pthread_t ids[64];
    for (int t = 0; t < threads && t < 64; ++t) pthread_create(&ids[t], NULL, worker, (void*)(long)(wave * 100 + t));
    for (int t = 0; t < threads && t < 64; ++t) {
      void* result = NULL;
      pthread_join(ids[t], &result);
      total += (long)result;
    }
    total += work(wave);
  }
  printf("waves=%d threads=%d total=%ld\n", waves, threads, total);
  return 0;
}
