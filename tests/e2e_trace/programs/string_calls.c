// glibc's own IFUNCs called a known number of times: memcpy COPIES times, strlen LENGTHS
// times and memset SETS times (argv[1..3]), all between a call of window_open() and one of
// window_close(), with nothing else in between. The calls go through volatile function
// pointers, so the compiler cannot inline or fold them; the pointers hold what the dynamic
// linker resolved (the implementations it chose). Prints the checksum of what it did.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void window_open(void) { __asm__ volatile(""); }
__attribute__((noinline)) void window_close(void) { __asm__ volatile(""); }

static void* (*volatile copy)(void*, const void*, size_t) = memcpy;
static size_t (*volatile length)(const char*) = strlen;
static void* (*volatile set)(void*, int, size_t) = memset;

int main(int argc, char** argv) {
  const long copies = argc > 1 ? atol(argv[1]) : 1000;
  const long lengths = argc > 2 ? atol(argv[2]) : 700;
  const long sets = argc > 3 ? atol(argv[3]) : 300;
  char source[64] = "xprobe traces the implementation the linker chose";
  char target[64];
  unsigned long checksum = 0;
  window_open();
  for (long i = 0; i < copies; ++i) checksum += ((char*)copy(target, source, 48))[i % 48];
  for (long i = 0; i < lengths; ++i) checksum += length(source + i % 16);
  for (long i = 0; i < sets; ++i) checksum += ((unsigned char*)set(target, (int)i, 32))[0];
  window_close();
  printf("copies=%ld lengths=%ld sets=%ld checksum=%lu\n", copies, lengths, sets, checksum);
  return 0;
}
