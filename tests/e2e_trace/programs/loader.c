// dlopens the plugin whose path it is given, calls into it, and closes it. With a second
// argument "busy", a thread spins in spin_step() meanwhile: the library arrives while another
// thread runs.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static volatile int stop_spinning;
static volatile long spins;

__attribute__((noinline)) long spin_step(long n) { return n + 1; }

static void *spin(void *unused) {
  (void)unused;
  while (!stop_spinning) spins = spin_step(spins);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  pthread_t spinner;
  const int busy = argc > 2 && strcmp(argv[2], "busy") == 0;
  if (busy) {
    pthread_create(&spinner, NULL, spin, NULL);
    while (spins < 1000) {
    }
  }
  void *handle = dlopen(argv[1], RTLD_NOW);
  if (handle == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  int (*compute)(int) = (int (*)(int))dlsym(handle, "plugin_compute");
  int total = 0;
  for (int i = 0; i < 4; ++i) total += compute(i);
  if (busy) {
    stop_spinning = 1;
    pthread_join(spinner, NULL);
  }
  printf("plugin total=%d\n", total);
  dlclose(handle);
  return 0;
}
