// Symbols of known kinds for the ELF reader's tests.
namespace fixture {
__attribute__((noinline)) int scale(int x, int factor) { return x * factor; }
struct Counter {
  __attribute__((noinline)) long bump(long by);
  long value = 0;
};
long Counter::bump(long by) { return value += by; }
}  // namespace fixture

extern "C" {
int fixture_global_counter = 42;
__attribute__((noinline)) int fixture_add(int a, int b) { return a + b; }
__attribute__((noinline)) int fixture_sub(int a, int b) { return a - b; }
}

int main(int argc, char**) {
  fixture::Counter c;
  return static_cast<int>(c.bump(fixture::scale(argc, fixture_add(1, fixture_sub(3, 2))))) == fixture_global_counter;
}
