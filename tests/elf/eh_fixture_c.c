// A C function: its FDE has no LSDA.
int eh_fixture_c_function(int x) { return x * 3; }
