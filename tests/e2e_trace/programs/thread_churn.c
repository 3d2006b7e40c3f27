// Creates and joins N threads one after the other, each calling work(i) once: a long trace
// of a program whose threads come and go. It says "ready" before the first thread and
// "joined" after the last, and each time waits for a byte on stdin, so that a test can look
// at the tracer in both moments.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile int last_work;

__attribute__((noinline)) void work(int i) { last_work = i; }

static void* run(void* arg) {
  work((int)(long)arg);
  return NULL;
}

static void wait_for_go(void) {
  char go;
  if (read(0, &go, 1) != 1) exit(3);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000;
  work(-1);  // the main thread's event: what xprobe opens for it is open before "ready"
  printf("ready\n");
  fflush(stdout);
  wait_for_go();
  for (int i = 0; i < n; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, run, (void*)(long)i) != 0) return 1;
    if (pthread_join(thread, NULL) != 0) return 2;
  }
  printf("joined\n");
  fflush(stdout);
  wait_for_go();
  return 0;
}
