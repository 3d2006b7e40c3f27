/* Code for the 32-bit objdump agreement test: compiled with gcc -m32 and several
 * code-generation flags, so the sweep sees x87, SSE/AVX, 64-bit arithmetic on a 32-bit
 * machine, PIC thunks, switch tables, string operations and atomics. */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

long double x87_poly(long double x, int n) {
  long double r = 0;
  for (int i = 0; i < n; ++i) r = r * x + (long double)i / 3.0L;
  return r;
}

double mixed(double a, float b, int c) { return a * b / (c + 1.5) - (float)c; }

int64_t wide(int64_t a, int64_t b) { return a * b + a / (b | 1) - (a >> 7) + (b % 1000); }

uint64_t rotate(uint64_t v, unsigned n) { return (v << (n & 63)) | (v >> ((64 - n) & 63)); }

int dispatch(int k, int v) {
  switch (k) {
    case 0: return v + 1;
    case 1: return v * 3;
    case 2: return v - 7;
    case 3: return v << 2;
    case 4: return v ^ 0x55;
    case 5: return ~v;
    case 6: return v / 9;
    case 7: return v % 11;
    default: return 0;
  }
}

void copy(char* dst, const char* src, size_t n) { memcpy(dst, src, n); memset(dst + n, 0, 16); }

static volatile int counter;
int bump(void) { return __sync_fetch_and_add(&counter, 1) + __sync_val_compare_and_swap(&counter, 5, 6); }

void vectors(float* restrict out, const float* restrict a, const float* restrict b, int n) {
  for (int i = 0; i < n; ++i) out[i] = a[i] * b[i] + out[i];
}

int sum_va(int n, ...) {
  va_list ap;
  va_start(ap, n);
  int s = 0;
  for (int i = 0; i < n; ++i) s += va_arg(ap, int);
  va_end(ap);
  return s;
}

unsigned short control_word(void) {
  unsigned short cw;
  __asm__ volatile("fstcw %0" : "=m"(cw));
  return cw;
}

int bits(unsigned x) { return __builtin_popcount(x) + __builtin_ctz(x | 1) + __builtin_clz(x | 1); }
