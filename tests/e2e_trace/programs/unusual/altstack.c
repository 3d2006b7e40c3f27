/* sigaltstack handlers that run probed code while the interrupted code is inside a probed
   call. The main thread's alternate stack is static (below its stack); a second thread's is
   mapped before the thread is created, so it lies above that thread's stack: an entry on it
   looks, by stack pointer, like a return past the interrupted call. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "work.h"

enum { kCalls = 500, kAltSize = 64 * 1024 };

static char main_alternate[kAltSize];

static void on_signal(int signal) {
  (void)signal;
  work(7, NULL); /* on the alternate stack */
}

static void interrupt(long x) {
  (void)x;
  pthread_kill(pthread_self(), SIGUSR1); /* delivered before pthread_kill returns */
}

static void use_alternate_stack(void* base) {
  stack_t alternate = {.ss_sp = base, .ss_size = kAltSize, .ss_flags = 0};
  if (sigaltstack(&alternate, NULL) != 0) abort();
}

static void calls(long base) {
  for (long i = 0; i < kCalls; ++i) work(base + i, i % 2 ? interrupt : NULL);
}

static void* thread_body(void* alternate) {
  use_alternate_stack(alternate);
  calls(10000);
  return NULL;
}

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR1, &action, NULL);
  use_alternate_stack(main_alternate);
  calls(0);
  void* above = mmap(NULL, kAltSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (above == MAP_FAILED) abort();
  pthread_t thread;
  pthread_create(&thread, NULL, thread_body, above);
  pthread_join(thread, NULL);
  print_work_record("altstack");
  return 0;
}
