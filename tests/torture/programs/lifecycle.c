// Ends its life in one of several ways while probed functions are being hit.
// Usage: lifecycle MODE   (segv | abort | selfkill | exit_from_thread | exec | fork | sleep)
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long work(long x) { return x * 3 + 1; }

static long warm_up(int n) {
  long total = 0;
  for (int i = 0; i < n; ++i) total += work(i);
  return total;
}

static void* spinning_thread(void* argument) {
  (void)argument;
  for (long i = 0;; ++i) {
    work(i);
    if (i % 100 == 0) {
      struct timespec pause = {0, 100 * 1000};
      nanosleep(&pause, NULL);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "segv";
  printf("warm=%ld\n", warm_up(1000));
  fflush(stdout);
  pthread_t helper;
  pthread_create(&helper, NULL, spinning_thread, NULL);
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  if (strcmp(mode, "segv") == 0) {
    volatile int* nothing = (volatile int*)(long)work(-1 / 3);  // address 1: faults
    return *nothing;
  }
  if (strcmp(mode, "abort") == 0) abort();
  if (strcmp(mode, "selfkill") == 0) kill(getpid(), SIGKILL);
  if (strcmp(mode, "exit_from_thread") == 0) exit(7);  // other thread still spinning in probed code
  if (strcmp(mode, "exec") == 0) {
    execl("/bin/echo", "echo", "after-exec", (char*)NULL);
    return 9;
  }
  if (strcmp(mode, "fork") == 0) {
    long child_totals = 0;
    for (int i = 0; i < 5; ++i) {
      const pid_t child = fork();
      if (child == 0) _exit((int)(warm_up(100) % 200));
      int status = 0;
      waitpid(child, &status, 0);
      child_totals += WEXITSTATUS(status);
    }
    printf("children=%ld\n", child_totals);
    return 0;
  }
  if (strcmp(mode, "sleep") == 0) {
    sleep(30);
    return 0;
  }
  return 3;
}
