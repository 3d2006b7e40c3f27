// A program that forbids itself new executable memory before its probed loop, the way hardened
// services do: a seccomp filter that fails (errno) or kills the process (kill) on mmap/mprotect
// with PROT_EXEC, or memory-deny-write-execute (mdwe, PR_SET_MDWE, Linux 6.3+). A tracer that
// maps code into it is refused or kills it. Output: a deterministic total, and whether the
// restriction holds for the program itself at the end (errno and mdwe modes).
// Usage: sealed errno|kill|mdwe|none [ROUNDS]
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

__attribute__((noinline)) long work(long x) { return x * 7 % 1009 + 1; }

static int forbid_exec_mappings(unsigned action) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "none";
  const long rounds = argc > 2 ? atol(argv[2]) : 3000;
  int restricted = 0;
  if (strcmp(mode, "errno") == 0) {
    restricted = forbid_exec_mappings(SECCOMP_RET_ERRNO | EPERM) == 0;
  } else if (strcmp(mode, "kill") == 0) {
    restricted = forbid_exec_mappings(SECCOMP_RET_KILL_PROCESS) == 0;
  } else if (strcmp(mode, "mdwe") == 0) {
    restricted = prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) == 0;
  }
  if (strcmp(mode, "none") != 0 && !restricted) {
    printf("cannot restrict (%s): %s\n", mode, strerror(errno));
    return 3;
  }
  long total = 0;
  for (long i = 0; i < rounds; ++i) {
    total += work(i);
    if (i % 100 == 0) {
      struct timespec pause = {0, 1000 * 1000};
      nanosleep(&pause, NULL);
    }
  }
  printf("mode=%s total=%ld\n", mode, total);
  if (strcmp(mode, "errno") == 0 || strcmp(mode, "mdwe") == 0) {
    // Still in force: a writable and executable mapping is refused.
    void* area = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("writable+executable mapping: %s\n", area == MAP_FAILED ? "refused" : "allowed");
  }
  return 0;
}
