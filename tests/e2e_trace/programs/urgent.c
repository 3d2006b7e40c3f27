/* A program with its own SIGURG handler (as Go's runtime has): the agent must not send it the
   signal it asks the tracer with, and the program's own SIGURG must still reach its handler. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t urgent;

static void on_urgent(int signal) {
  (void)signal;
  ++urgent;
}

__attribute__((noinline)) long work(long x) { return x * 5 + 1; }

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_urgent;
  sigaction(SIGURG, &action, NULL);
  const struct timespec pause = {0, 1000000};
  long total = 0;
  for (int i = 0; i < 200; ++i) {
    total += work(i);
    nanosleep(&pause, NULL);
  }
  raise(SIGURG);
  printf("total=%ld urgent=%d\n", total, (int)urgent);
  return 0;
}
