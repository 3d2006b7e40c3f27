/* The bundled example the demo traces, after the kernel's samples/kprobes/kprobe_example.c:
   a program that opens files by name, so that entry and return probes with string
   arguments have something to show. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int open_config(const char *path, int flags) {
  int fd = open(path, flags);
  if (fd >= 0) close(fd);
  return fd >= 0 ? 0 : -1;
}

__attribute__((noinline)) long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(int argc, char **argv) {
  const char *paths[] = {"/etc/hostname", "/etc/passwd", "/nonexistent/config"};
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  int failures = 0;
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i) failures += open_config(paths[i], O_RDONLY) != 0;
  printf("opened %zu files, %d failed, fib(5)=%ld\n", rounds * (sizeof paths / sizeof paths[0]), failures, fib(5));
  return 0;
}
