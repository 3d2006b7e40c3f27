/* The probed function every program here calls, and the program's own record of its calls:
   the number of calls, the sum of the arguments and the sum of the results. The record is
   kept with atomic adds, so a signal handler or another thread may call work() too. A test
   checks each return event's result against work_result(x) of its own $arg1: a return
   matched to another call's frame would carry another argument's result. */
#pragma once
#include <stdio.h>

struct work_record {
  long calls, argument_sum, result_sum;
};
static struct work_record work_record;

/* Not inlined and not cloned: the probe is on this symbol. `hook` runs in the middle of the
   call (a yield, a signal...), while work's frame is active. */
__attribute__((noinline, noclone)) long work(long x, void (*hook)(long)) {
  long result = x * 3 + 1;
  if (hook) hook(x);
  __atomic_fetch_add(&work_record.calls, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&work_record.argument_sum, x, __ATOMIC_RELAXED);
  __atomic_fetch_add(&work_record.result_sum, result, __ATOMIC_RELAXED);
  return result;
}

static void print_work_record(const char* who) {
  printf("%s calls=%ld argument_sum=%ld result_sum=%ld\n", who, work_record.calls, work_record.argument_sum,
         work_record.result_sum);
}
