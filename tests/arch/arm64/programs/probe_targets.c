/* An arm64 program for the end-to-end test of `xprobe decode/check` on AArch64 ELF files. */
int add_three(int x) { return x + 3; }

unsigned swap_word(unsigned* p, unsigned v) {
  unsigned old, status;
  __asm__ volatile("1: ldaxr %w0, [%2]\n add %w0, %w0, #0\n stlxr %w1, %w3, [%2]\n cbnz %w1, 1b"
                   : "=&r"(old), "=&r"(status) : "r"(p), "r"(v) : "memory");
  return old;
}

void make_syscall(void) { __asm__ volatile("mov x8, #172\n svc #0" ::: "x0", "x8", "memory"); }

int main(void) { return add_three(1); }
