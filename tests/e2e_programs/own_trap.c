// A program that raises SIGTRAP itself and executes its own int3: xprobe must deliver these.
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile int traps = 0;

static void on_trap(int signal) { (void)signal; ++traps; }

__attribute__((noinline)) int probed(int x) { return x * 2; }

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_trap;
  sigaction(SIGTRAP, &action, NULL);
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    total += probed(i);
    raise(SIGTRAP);
    __asm__ volatile("int3");
  }
  printf("traps=%d total=%d\n", traps, total);
  return 0;
}
