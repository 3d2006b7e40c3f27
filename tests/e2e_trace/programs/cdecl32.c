// An i386 program (built with gcc -m32) for the trap engine's 32-bit support: cdecl
// arguments on the stack, strings, recursion, a return value in eax. It prints every value
// it passes and gets back, so a test compares the events with the program's own account.
// Usage: cdecl32 [ROUNDS [MICROSECONDS_BETWEEN_ROUNDS]]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int greet(const char *name, int times) {
  int total = 0;
  for (int i = 0; i < times; ++i) total += (int)strlen(name);
  return total;
}

__attribute__((noinline)) int sum3(int a, int b, int c) { return a + b + c; }

__attribute__((noinline)) int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

static const char *const kNames[] = {"alpha", "be", "gamma ray"};

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  int pause_us = argc > 2 ? atoi(argv[2]) : 0;  // between rounds: long enough to attach to
  int status = 0;
  for (int i = 0; i < rounds; ++i) {
    const char *name = kNames[i % 3];
    int g = greet(name, i + 1);
    printf("greet name=%s times=%d -> %d\n", name, i + 1, g);
    int s = sum3(i, -7 * i, 1000 + i);
    printf("sum3 %d %d %d -> %d\n", i, -7 * i, 1000 + i, s);
    int f = fact(i + 3);
    printf("fact %d -> %d\n", i + 3, f);
    status += g;
    if (pause_us > 0) usleep((useconds_t)pause_us);
  }
  fflush(stdout);
  return status % 50;
}
