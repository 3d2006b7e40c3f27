/* New processes and threads made the unusual ways: vfork (the child runs probed code in the
   parent's memory, on the parent's stack, while the parent waits), posix_spawn (glibc's
   clone(CLONE_VM | CLONE_VFORK) on a stack of its own), and clone3 both as a fork and as a
   thread on a stack the program maps. Every child runs work() and reports its record in its
   exit status or through shared memory; the parent prints the sums. */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

extern char** environ;

enum { kRounds = 20 };

static long child_calls(long base) {
  long sum = 0;
  for (long i = 0; i < 5; ++i) sum += work(base + i, NULL);
  return sum;
}

static int exit_code_of(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, __WALL) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

/* clone3 as a thread (CLONE_VM) on its own stack: the child starts on the new stack, with
   nothing to return to, so the system call is made here and the child calls its code
   directly (no C function may return in it). */
static volatile long clone_thread_sum;
__attribute__((used, noinline)) static void clone_thread_main(void) {
  clone_thread_sum = child_calls(7000);
  syscall(SYS_exit, 0);
}

static pid_t clone3_thread(void* stack, size_t size) {
  static struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
  args.stack = (unsigned long)stack;
  args.stack_size = size;
  long pid;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xor %%ebp, %%ebp\n\t"
      "call clone_thread_main\n\t"
      "hlt\n"
      "1:"
      : "=a"(pid)
      : "a"((long)SYS_clone3), "D"(&args), "S"(sizeof args)
      : "rcx", "r11", "memory");
  return (pid_t)pid;
}

int main(int argc, char** argv) {
  if (argc > 1) return (int)(child_calls(atol(argv[1])) & 0x7f); /* a spawned copy */
  long vfork_calls = 0, vfork_sum = 0, spawn_codes = 0, fork_codes = 0, thread_sum = 0;
  void* stack = mmap(NULL, 256 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  for (long round = 0; round < kRounds; ++round) {
    work(round, NULL);
    /* vfork: the child shares memory; what it computes is the parent's when it exits. */
    static volatile long shared;
    pid_t pid = vfork();
    if (pid == 0) {
      shared = child_calls(1000 + round);
      _exit(0);
    }
    if (exit_code_of(pid) == 0) vfork_sum += shared, vfork_calls += 5;
    /* posix_spawn of this program: a separate image, its own record (its exit status). */
    char base[32];
    snprintf(base, sizeof base, "%ld", 3000 + round);
    char* child_argv[] = {argv[0], base, NULL};
    if (posix_spawn(&pid, argv[0], NULL, NULL, child_argv, environ) == 0) spawn_codes += exit_code_of(pid);
    /* clone3 as a fork. */
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.exit_signal = SIGCHLD;
    pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) _exit((int)(child_calls(5000 + round) & 0x7f));
    fork_codes += exit_code_of(pid);
    /* clone3 as a thread (of this process; it signals nothing on exit): wait for its result. */
    clone_thread_sum = 0;
    pid = clone3_thread(stack, 256 * 1024);
    while (clone_thread_sum == 0) usleep(100);
    thread_sum += clone_thread_sum;
    usleep(1000); /* let it reach its exit */
  }
  printf("spawner vfork_calls=%ld vfork_sum=%ld spawn_codes=%ld fork_codes=%ld thread_sum=%ld\n", vfork_calls, vfork_sum, spawn_codes, fork_codes,
         thread_sum);
  print_work_record("parent");
  return 0;
}
