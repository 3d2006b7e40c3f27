// Execs itself once: probes must be planted again in the new image.
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int work(int x) { return x * 10; }

int main(int argc, char** argv) {
  if (argc == 1) {
    printf("before=%d\n", work(1));
    fflush(stdout);
    execl(argv[0], argv[0], "again", (char*)NULL);
    return 1;
  }
  printf("after=%d\n", work(2) + work(3));
  return 4;
}
