// Enters seccomp strict-ish filter mode (a filter allowing everything) before its probed
// code: xprobe must not inject system calls into it, and must say so.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x) { return x + 5; }

int main(int argc, char** argv) {
  (void)argv;
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog program = {1, allow};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) return 9;
  if (argc > 1) pause();
  printf("work=%d\n", work(1));
  return 0;
}
