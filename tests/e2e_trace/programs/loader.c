// dlopens the plugin whose path it is given, calls into it, and closes it.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  void *handle = dlopen(argv[1], RTLD_NOW);
  if (handle == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  int (*compute)(int) = (int (*)(int))dlsym(handle, "plugin_compute");
  int total = 0;
  for (int i = 0; i < 4; ++i) total += compute(i);
  printf("plugin total=%d\n", total);
  dlclose(handle);
  return 0;
}
