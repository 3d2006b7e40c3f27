// A program that raises SIGTRAP itself and executes its own breakpoint instructions: xprobe
// must deliver these. AArch64: BRK #0, the same kind as the trap engine's. x86: int3, and hlt,
// the trap engine's kind (it faults in user mode: SIGSEGV, rip on the hlt).
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static volatile int traps = 0;

// A BRK or a hlt returns to itself: the handler steps over it (an int3 returns after itself).
static void on_trap(int signal, siginfo_t* info, void* context) {
#if defined(__aarch64__)
  (void)signal;
  if (info->si_code == TRAP_BRKPT) ((ucontext_t*)context)->uc_mcontext.pc += 4;
#else
  if (signal == SIGSEGV && info->si_code == SI_KERNEL) ((ucontext_t*)context)->uc_mcontext.gregs[REG_RIP] += 1;
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
  sigaction(SIGSEGV, &action, NULL);
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    total += probed(i);
    raise(SIGTRAP);
#if defined(__aarch64__)
    __asm__ volatile("brk #0");
#else
    __asm__ volatile("int3");
    __asm__ volatile("hlt");
#endif
  }
  printf("traps=%d total=%d\n", traps, total);
  return 0;
}
