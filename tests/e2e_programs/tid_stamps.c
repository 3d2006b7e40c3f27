// Passes its own thread id to the probed function, so that every event's tid can be checked
// against the program's own record: threads started one after another (the C library gives
// each the previous one's stack and thread block, so the same thread pointer with a new id),
// and a vfork child, which runs with its parent's thread pointer in its parent's memory.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long last_stamp;

// The store keeps the calls: a function without side effects may be called zero times.
__attribute__((noinline)) void stamp(long tid) { last_stamp = tid; }

static long own_tid(void) { return syscall(SYS_gettid); }

static void* run(void* argument) {
  (void)argument;
  stamp(own_tid());
  stamp(own_tid());
  return NULL;
}

int main(void) {
  stamp(own_tid());
  for (int i = 0; i < 6; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, run, NULL) != 0) return 2;
    pthread_join(thread, NULL);
  }
  pid_t child = vfork();
  if (child == 0) {
    stamp(own_tid());
    stamp(own_tid());
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  stamp(own_tid());
  pid_t forked = fork();
  if (forked == 0) {
    stamp(own_tid());  // the patches are gone from a child that is not followed: no event
    _exit(0);
  }
  waitpid(forked, &status, 0);
  stamp(own_tid());
  printf("done\n");
  return 0;
}
