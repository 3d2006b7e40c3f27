// Calls for filters and aggregations to select from, in an order fixed by its arguments.
//   filter_calls visits N   calls visit(n, u, name, s) N times with a spread of numbers and names
//   filter_calls timed N    calls timed_call(k) N times (k = i % 4); each call spins for
//                           kSpinNs[k] (the middle of a power-of-two range of nanoseconds), timed
//                           by the program with clock_gettime around the call: it prints one
//                           "call K NS" line per call
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char* const kNames[] = {"alpha", "beta", "gamma", "delta", "epsilon", "alphabet", "zeta", "beta-max"};

__attribute__((noinline)) long visit(long n, unsigned u, const char* name, short s) {
  __asm__ volatile("");
  return n + (long)u + name[0] + s;
}

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static const unsigned long long kSpinNs[] = {3000, 24000, 48000, 100000};

__attribute__((noinline)) long timed_call(long k) {
  const unsigned long long until = now_ns() + kSpinNs[k & 3];
  long spins = 0;
  while (now_ns() < until) ++spins;
  return spins;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "visits";
  const long rounds = argc > 2 ? atol(argv[2]) : 64;
  long total = 0;
  if (strcmp(mode, "timed") == 0) {
    for (long i = 0; i < rounds; ++i) {
      const long k = i % 4;
      const unsigned long long start = now_ns();
      total += timed_call(k);
      printf("call %ld %llu\n", k, now_ns() - start);
    }
    return 0;
  }
  for (long i = 0; i < rounds; ++i) {
    const unsigned u = (unsigned)i * 2654435761u;
    total += visit(i * 7 - 100, u, kNames[(i * 5) % 8], (short)(i * 1000));
  }
  printf("total=%ld\n", total);
  return 0;
}
