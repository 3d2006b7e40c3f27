// posix_spawn (clone with CLONE_VM | CLONE_VFORK): the child shares the parent's memory,
// breakpoints included, until it execs.
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

extern char** environ;

__attribute__((noinline)) int work(int x) { return x + 2; }

int main(void) {
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    total += work(i);
    pid_t child;
    char* argv[] = {"/bin/true", NULL};
    if (posix_spawn(&child, "/bin/true", NULL, NULL, argv, environ) != 0) return 2;
    int status = 0;
    waitpid(child, &status, 0);
    total += WEXITSTATUS(status);
  }
  printf("total=%d\n", total);
  return 0;
}
