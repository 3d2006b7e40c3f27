/* Load/store-exclusive sequences as programs write them: inline asm loops of every size and
   pair form, plus compiler-generated ones (built with -mno-outline-atomics, no LSE). */
#include <stdint.h>

uint32_t fetch_add_w(uint32_t* p, uint32_t v) {
  uint32_t old, tmp, status;
  __asm__ volatile("1: ldxr %w0, [%3]\n add %w1, %w0, %w4\n stxr %w2, %w1, [%3]\n cbnz %w2, 1b"
                   : "=&r"(old), "=&r"(tmp), "=&r"(status) : "r"(p), "r"(v) : "memory");
  return old;
}

uint8_t swap_byte_acquire_release(uint8_t* p, uint8_t v) {
  uint32_t old, status;
  __asm__ volatile("1: ldaxrb %w0, [%2]\n stlxrb %w1, %w3, [%2]\n cbnz %w1, 1b"
                   : "=&r"(old), "=&r"(status) : "r"(p), "r"(v) : "memory");
  return (uint8_t)old;
}

uint16_t swap_half(uint16_t* p, uint16_t v) {
  uint32_t old, status;
  __asm__ volatile("1: ldxrh %w0, [%2]\n stxrh %w1, %w3, [%2]\n cbnz %w1, 1b\n"
                   "ldaxrh %w0, [%2]\n stlxrh %w1, %w3, [%2]"
                   : "=&r"(old), "=&r"(status) : "r"(p), "r"(v) : "memory");
  return (uint16_t)old;
}

void swap_pair(uint64_t* p, uint64_t a, uint64_t b) {
  uint64_t lo, hi;
  uint32_t status;
  __asm__ volatile("1: ldaxp %0, %1, [%3]\n stlxp %w2, %4, %5, [%3]\n cbnz %w2, 1b\n"
                   "2: ldxp %w0, %w1, [%3]\n stxp %w2, %w4, %w5, [%3]\n cbnz %w2, 2b\n clrex"
                   : "=&r"(lo), "=&r"(hi), "=&r"(status) : "r"(p), "r"(a), "r"(b) : "memory");
}

int compare_exchange(long* p, long expected, long desired) {
  return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

long fetch_or(long* p, long v) { return __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL); }
