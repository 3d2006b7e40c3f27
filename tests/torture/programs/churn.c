// Threads created and joined in waves while every one calls a probed function: probes are
// hit while threads are being created and exit. Output: a deterministic total.
// Usage: churn [WAVES] [THREADS_PER_WAVE] [CALLS_PER_THREAD]
// Should it die of SIGSEGV, it first says on stderr where: on a hlt (a breakpoint of the trap
// engine that nobody serves any more) or elsewhere (its own code run wrong).
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static void say(const char* text) { (void)!write(2, text, strlen(text)); }

static void on_sigsegv(int signal, siginfo_t* info, void* context) {
  (void)signal;
  const unsigned char* ip = (const unsigned char*)((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP];
  say(info->si_code == SI_KERNEL && *ip == 0xf4 ? "churn: SIGSEGV on a hlt\n" : "churn: SIGSEGV elsewhere\n");
  // Back to the default action: the instruction faults again and the program dies of it.
  struct sigaction fallback;
  memset(&fallback, 0, sizeof fallback);
  fallback.sa_handler = SIG_DFL;
  sigaction(SIGSEGV, &fallback, NULL);
}

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
  struct sigaction on_fault;
  memset(&on_fault, 0, sizeof on_fault);
  on_fault.sa_sigaction = on_sigsegv;
  on_fault.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &on_fault, NULL);
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
