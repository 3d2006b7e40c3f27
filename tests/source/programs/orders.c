// A program for source-level probes: structs, pointers, arrays, bitfields, locals on the
// stack and in registers, a static function the optimiser inlines, and USDT markers (one
// guarded by a semaphore). Its own record (stdout) is what the tests compare with.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
// Every marker of this file has a semaphore (sdt.h then records its address in the note).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

struct header {
  unsigned short kind;
  unsigned len;
};

struct flags {
  unsigned urgent : 1;
  unsigned priority : 3;
  unsigned retries : 4;
};

struct order {
  struct header hdr;
  struct flags flags;
  const char* customer;
  int quantities[4];
  char code[8];
};

unsigned short orders_handled_semaphore __attribute__((section(".probes"))) = 0;
unsigned short orders_guarded_semaphore __attribute__((section(".probes"))) = 0;
int total_quantity = 0;

static int weight(const struct order* order, int index) {
  int q = order->quantities[index];
  return q * (index + 1);
}

__attribute__((noinline)) int handle_order(struct order* order, int round) {
  int sum = 0;
  for (int i = 0; i < 4; ++i) sum += weight(order, i);
  total_quantity += sum;
  DTRACE_PROBE3(orders, handled, order->hdr.len, round, order->customer);
  // Only a tracer makes the semaphore non-zero: this marker fires only while traced.
  if (orders_guarded_semaphore) DTRACE_PROBE2(orders, guarded, round, sum);
  printf("handled %d len=%u kind=%u sum=%d\n", round, order->hdr.len, order->hdr.kind, sum);
  return sum;
}

__attribute__((noinline)) int add_all(const int* values, int count) {
  int total = 0;
  for (int i = 0; i < count; ++i) total += values[i];
  return total;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  // "slow": a round every 2 ms, for a tracer to attach to and leave while it runs.
  const int slow = argc > 2 && strcmp(argv[2], "slow") == 0;
  static const char* customers[] = {"ada", "brian", "carol"};
  for (int round = 0; round < rounds; ++round) {
    struct order order;
    memset(&order, 0, sizeof order);
    order.hdr.kind = (unsigned short)(7 + round);
    order.hdr.len = 100u + (unsigned)round;
    order.flags.urgent = (unsigned)round & 1u;
    order.flags.priority = (unsigned)(round + 2) & 7u;
    order.flags.retries = (unsigned)(round * 3) & 15u;
    order.customer = customers[round % 3];
    for (int i = 0; i < 4; ++i) order.quantities[i] = round * 10 + i;
    snprintf(order.code, sizeof order.code, "C%d", round);
    handle_order(&order, round);
    if (slow) {
      fflush(stdout);
      usleep(2000);
    }
  }
  int values[3] = {1, 2, 3};
  printf("total %d %d\n", total_quantity, add_all(values, 3));
  return 0;
}
