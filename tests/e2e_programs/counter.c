// Calls a few small functions many times: entry, return and mid-function probes, a
// RIP-relative load and store, recursion. Output and exit status are deterministic.
#include <stdio.h>
#include <stdlib.h>

int global_counter = 40;

__attribute__((noinline)) int add(int a, int b) { return a + b; }

__attribute__((noinline)) int read_global(void) { return global_counter; }

__attribute__((noinline)) void bump_global(void) { global_counter += 2; }

__attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) const char* greet(const char* name) {
  printf("hello %s\n", name);
  return name;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  long sum = 0;
  for (int i = 0; i < rounds; ++i) {
    sum += add(i, 2 * i);
    bump_global();
    sum += read_global();
  }
  printf("sum=%ld fib=%d\n", sum, fib(10));
  greet("world");
  return 3;
}
