// One of several processes a single xprobe session traces (multi_process_test.cpp). Started
// as `multi_calls ID`, it acts on lines from stdin, one at a time, and answers each on stdout
// once done, so the test knows what every process did between two of its own actions:
//   go            kCalls calls of multi_work(ID, call), call numbered on from the last ones
//   load PATH     dlopen(PATH) (the plugin library), then 4 calls of its plugin_compute(ID*10+i)
//   quit / EOF    prints its own record (calls made, their sum) and exits with status 0
// The record is the oracle: a traced run must print the same as an untraced one.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kCalls = 20 };

__attribute__((noinline)) long multi_work(int id, int call) {
  long value = (long)id * 1000 + call;
  __asm__ volatile("" : "+r"(value));
  return value * 3 + 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int id = atoi(argv[1]);
  int calls = 0;
  long sum = 0;
  char line[4096];
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready %d\n", id);
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (strcmp(line, "go") == 0) {
      for (int i = 0; i < kCalls; ++i) sum += multi_work(id, calls++);
      printf("done %d\n", calls);
    } else if (strncmp(line, "load ", 5) == 0) {
      void* handle = dlopen(line + 5, RTLD_NOW);
      if (handle == NULL) {
        printf("dlopen failed: %s\n", dlerror());
        continue;
      }
      int (*compute)(int) = (int (*)(int))dlsym(handle, "plugin_compute");
      for (int i = 0; i < 4; ++i) sum += compute(id * 10 + i);
      printf("loaded\n");
    } else if (strcmp(line, "quit") == 0) {
      break;
    }
  }
  printf("id %d calls %d sum %ld\n", id, calls, sum);
  return 0;
}
