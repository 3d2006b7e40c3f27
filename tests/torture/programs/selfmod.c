// Rewrites its own code: the first bytes of `patched` become "mov eax, 42; ret" while a
// probe may sit there. Prints what the function returns before and after.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) int patched(int x) { return x + 1; }

int main(void) {
  int before = 0;
  for (int i = 0; i < 10; ++i) before += patched(i);
  const long page = sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)patched & ~(uintptr_t)(page - 1);
  if (mprotect((void*)start, (size_t)page * 2, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
    perror("mprotect");
    return 2;
  }
  static const unsigned char replacement[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};  // mov eax, 42; ret
  memcpy((void*)patched, replacement, sizeof replacement);
  __builtin___clear_cache((char*)patched, (char*)patched + sizeof replacement);
  int after = 0;
  for (int i = 0; i < 10; ++i) after += patched(i);
  printf("before=%d after=%d\n", before, after);
  return 0;
}
