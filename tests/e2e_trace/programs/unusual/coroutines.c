/* swapcontext coroutines: eight coroutines on stacks of their own (malloc'd, below the main
   stack) yield to the scheduler from inside work(), so a probed call is active on one stack
   while the thread runs probed calls on the others and on the main stack. */
#include <stdlib.h>
#include <ucontext.h>

#include "work.h"

enum { kCoroutines = 8, kRounds = 200, kStackSize = 64 * 1024 };

static ucontext_t scheduler, coroutine[kCoroutines];
static int current;

static void yield(long x) {
  (void)x;
  swapcontext(&coroutine[current], &scheduler);
}

static void body(int index) {
  for (int round = 0; round < kRounds; ++round) {
    work(index * 1000 + round, yield); /* yields inside the probed call */
    work(index * 1000 + round + 500, NULL);
  }
}

int main(void) {
  for (int i = 0; i < kCoroutines; ++i) {
    getcontext(&coroutine[i]);
    coroutine[i].uc_stack.ss_sp = malloc(kStackSize);
    coroutine[i].uc_stack.ss_size = kStackSize;
    coroutine[i].uc_link = &scheduler;
    makecontext(&coroutine[i], (void (*)(void))body, 1, i);
  }
  /* Each coroutine yields once per round; the resume after its last round runs body() to its
     end, and uc_link brings the thread back here. */
  for (int round = 0; round <= kRounds; ++round)
    for (current = 0; current < kCoroutines; ++current) {
      work(100000 + current, NULL); /* a probed call on the main stack between switches */
      swapcontext(&scheduler, &coroutine[current]);
    }
  print_work_record("coroutines");
  return 0;
}
