// A program that raises SIGTRAP itself and executes its own int3 (AArch64: BRK #0): xprobe
// must deliver these.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static volatile int traps = 0;

// A BRK returns to itself: the handler steps over it (an int3 returns after itself).
static void on_trap(int signal, siginfo_t* info, void* context) {
  (void)signal;
#if defined(__aarch64__)
  if (info->si_code == TRAP_BRKPT) ((ucontext_t*)context)->uc_mcontext.pc += 4;
#else
  (void)info;
  (void)context;
#endif
  ++traps;
}

__attribute__((noinline)) int probed(int x) { return x * 2; }

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_trap;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGTRAP, &action, NULL);
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    total += probed(i);
    raise(SIGTRAP);
#if defined(__aarch64__)
    __asm__ volatile("brk #0");  // the same kind of breakpoint as a tracer's
#else
    __asm__ volatile("int3");
#endif
  }
  printf("traps=%d total=%d\n", traps, total);
  return 0;
}
