// Calls work() once, then puts itself under a seccomp filter that kills the process on gettid
// and process_vm_readv (system calls it never makes itself), then calls work() twice more.
// Whatever a tracer runs inside this process after that must do without those calls.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

__attribute__((noinline)) int work(int x, const char *label) { return x * 10 + (label[0] == 'a'); }

int main(void) {
  int total = work(1, "before");
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_gettid, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 8;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) return 9;
  total += work(2, "after");
  total += work(3, "again");
  printf("total=%d\n", total);
  return 0;
}
