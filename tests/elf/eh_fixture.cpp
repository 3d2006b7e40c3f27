// Functions with a known number of exception landing pads, for exception_tables_test.
// Built at test time (g++ -S, then assembled with local labels kept) so that the assembly
// is the oracle for the call-site tables.
#include <stdexcept>

extern "C" int eh_fixture_c_function(int x);  // eh_fixture_c.c: C, so no LSDA

namespace {
volatile int sink;
}

struct Guard {
  explicit Guard(int where) : where_(where) {}
  ~Guard();
  int where_;
};

__attribute__((noinline)) Guard::~Guard() { sink = where_; }

__attribute__((noinline)) void may_throw(int x) {
  if (x > 1000) throw std::runtime_error("too big");
  sink = x;
}

// The destructor must run when may_throw throws: one cleanup landing pad.
__attribute__((noinline)) int one_cleanup(int x) {
  Guard guard(x);
  may_throw(x);
  return x + 1;
}

// Two try blocks whose handlers differ: two landing pads.
__attribute__((noinline)) int two_try_blocks(int x) {
  int result = 0;
  try {
    may_throw(x);
  } catch (int) {
    result += 1;
  }
  try {
    may_throw(x + 1);
  } catch (int) {
    result += 2;
  }
  return result;
}

// Three objects destroyed on different paths: after the first, second or third call throws
// a different set of destructors runs, so three cleanup landing pads.
__attribute__((noinline)) int three_cleanups(int x) {
  Guard a(x);
  may_throw(x);
  Guard b(x + 1);
  may_throw(x + 1);
  Guard c(x + 2);
  may_throw(x + 2);
  return x;
}

// Calls that cannot throw need no landing pad.
__attribute__((noinline)) int no_landing_pads(int x) noexcept { return eh_fixture_c_function(x) + 1; }

int main(int argc, char**) {
  int total = one_cleanup(argc) + two_try_blocks(argc) + three_cleanups(argc) + no_landing_pads(argc);
  try {
    may_throw(argc * 5000);
  } catch (const std::exception&) {
    total += 7;
  }
  return total == 0;
}
