// Eight threads call live_work() in phases that the controlling test starts one at a time:
// a line on stdin starts the next phase, in which every thread makes kCalls calls, each with
// the phase's number and its own call number; "done N" on stdout says they all returned.
// So the test knows exactly which calls were made between two of its own actions (it only
// acts between phases). At the end ("quit", or stdin's end) the program prints what it
// computed from its calls and exits with a status derived from it, for a comparison with an
// untraced run.
//
// `live_calls park`: one thread calls live_work() in a loop while the main thread sends it
// SIGUSR1 until the handler finds that the signal interrupted it outside every executable
// file-backed mapping the program has at its start (so inside code a tracer put there: a
// trampoline or the agent). The handler then parks the thread (it blocks), and the program prints "parked".
// A line on stdin lets it go on: it makes 1000 more calls and the program prints its result.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { kThreads = 8, kCalls = 16 };

static pthread_barrier_t phase_start, phase_end;
static volatile int current_phase;
static long sums[kThreads];

__attribute__((noinline)) long live_work(int phase, int call) {
  long value = (long)phase * 1000 + call;
  for (int i = 0; i < 3; ++i) {
    value = value * 31 + i;
    __asm__ volatile("" : "+r"(value));
  }
  return value;
}

static void* worker(void* argument) {
  const int thread = (int)(long)argument;
  for (;;) {
    pthread_barrier_wait(&phase_start);
    const int phase = current_phase;
    if (phase < 0) return NULL;
    for (int i = 0; i < kCalls; ++i) sums[thread] += live_work(phase, thread * kCalls + i) % 1000003;
    pthread_barrier_wait(&phase_end);
  }
}

enum { kMaxRanges = 64 };
static uintptr_t code_begin[kMaxRanges], code_end[kMaxRanges];
static int code_ranges;
static int parked_pipe[2], release_pipe[2];
static volatile sig_atomic_t parked, stop_calling;

static void read_code_ranges(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[512];
  while (maps != NULL && fgets(line, sizeof line, maps) != NULL && code_ranges < kMaxRanges) {
    unsigned long begin, end;
    char perms[8];
    // Executable and backed by a file (or the kernel's [vdso]): a tracer's own code areas are
    // anonymous (and may be mapped before main already).
    const char* path = strchr(line, '/');
    if (path == NULL) path = strstr(line, "[vdso]");
    if (path != NULL && sscanf(line, "%lx-%lx %7s", &begin, &end, perms) == 3 && perms[2] == 'x') {
      code_begin[code_ranges] = begin;
      code_end[code_ranges++] = end;
    }
  }
  if (maps != NULL) fclose(maps);
}

static uintptr_t interrupted_pc(void* context) {
  const ucontext_t* uc = context;
#if defined(__x86_64__)
  return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)uc->uc_mcontext.pc;
#else
  (void)uc;
  return 0;
#endif
}

static void on_usr1(int signal, siginfo_t* info, void* context) {
  (void)signal;
  (void)info;
  if (parked) return;
  const uintptr_t pc = interrupted_pc(context);
  for (int i = 0; i < code_ranges; ++i)
    if (pc >= code_begin[i] && pc < code_end[i]) return;  // the program's own code: not yet
  parked = 1;
  char byte = 'P';
  (void)!write(parked_pipe[1], &byte, 1);
  (void)!read(release_pipe[0], &byte, 1);  // blocks here, inside the tracer's code's caller
}

static void* park_caller(void* argument) {
  long* total = argument;
  long call = 0;
  while (!stop_calling) *total += live_work(1, (int)(call++ & 0xffff)) % 1000003;
  for (int i = 0; i < 1000; ++i) *total += live_work(2, i) % 1000003;
  return NULL;
}

static int park(void) {
  read_code_ranges();
  if (pipe(parked_pipe) != 0 || pipe(release_pipe) != 0) return 100;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_usr1;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGUSR1, &action, NULL);
  pthread_t caller;
  long total = 0;
  pthread_create(&caller, NULL, park_caller, &total);
  printf("ready\n");
  fflush(stdout);
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) return 101;  // the probe is in: start
  for (int tries = 0; !parked && tries < 200000; ++tries) {
    pthread_kill(caller, SIGUSR1);
    const struct timespec pause = {0, 20000};
    nanosleep(&pause, NULL);
  }
  if (!parked) {
    printf("never parked\n");
    return 102;
  }
  char byte = 0;
  (void)!read(parked_pipe[0], &byte, 1);
  printf("parked\n");
  fflush(stdout);
  if (fgets(line, sizeof line, stdin) == NULL) return 103;
  stop_calling = 1;
  (void)!write(release_pipe[1], &byte, 1);
  pthread_join(caller, NULL);
  printf("released\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "park") == 0) return park();
  pthread_t threads[kThreads];
  pthread_barrier_init(&phase_start, NULL, kThreads + 1);
  pthread_barrier_init(&phase_end, NULL, kThreads + 1);
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, worker, (void*)t);
  printf("ready\n");
  fflush(stdout);
  char line[64];
  int phases = 0;
  while (fgets(line, sizeof line, stdin) != NULL && strncmp(line, "quit", 4) != 0) {
    current_phase = ++phases;
    pthread_barrier_wait(&phase_start);
    pthread_barrier_wait(&phase_end);
    printf("done %d\n", phases);
    fflush(stdout);
  }
  current_phase = -1;
  pthread_barrier_wait(&phase_start);
  long total = 0;
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    total += sums[t];
  }
  printf("phases %d total %ld\n", phases, total);
  return (int)(total % 97);
}

