// C++ exceptions thrown through probed functions, caught several frames up.
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) int inner(int n) {
  if (n % 4 == 3) throw std::runtime_error("odd one");
  return n * 2;
}

__attribute__((noinline)) int middle(int n) { return inner(n) + 1; }

__attribute__((noinline)) int outer(int n) {
  try {
    return middle(n);
  } catch (const std::runtime_error& error) {
    return -100;
  }
}

int main() {
  long total = 0;
  for (int i = 0; i < 40; ++i) total += outer(i);
  std::printf("total=%ld\n", total);
  return 5;
}
