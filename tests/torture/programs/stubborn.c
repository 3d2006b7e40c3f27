// Blocks every signal it can and ignores SIGINT, SIGTERM and SIGTRAP, then works for a while:
// the tracer must neither depend on the program's signal mask nor leak its own signals to it.
#include <signal.h>
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) long work(long x) { return x * 5 % 7919; }

int main(void) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGTRAP, SIG_IGN);
  long total = 0;
  for (int i = 0; i < 3000; ++i) {
    total += work(i);
    if (i % 30 == 0) {
      struct timespec pause = {0, 1000 * 1000};
      nanosleep(&pause, NULL);
    }
  }
  printf("total=%ld\n", total);
  return 0;
}
