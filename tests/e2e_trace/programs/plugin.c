// A library the loader program dlopens after start: its probes wait until it is mapped.
__attribute__((noinline)) int plugin_compute(int x) { return x * x + 1; }
