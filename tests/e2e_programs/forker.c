// Forks while probes are planted: the child must run untouched (no breakpoint left).
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x) { return x + 1; }

int main(void) {
  int total = 0;
  for (int i = 0; i < 5; ++i) total += work(i);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    int mine = 0;
    for (int i = 0; i < 5; ++i) mine += work(i);
    printf("child=%d\n", mine);
    return 7;
  }
  int status = 0;
  waitpid(child, &status, 0);
  for (int i = 0; i < 5; ++i) total += work(i);
  printf("parent=%d child_status=%d\n", total, WEXITSTATUS(status));
  return 0;
}
