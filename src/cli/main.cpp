// xprobe's entry point.
#include <cstdio>
#include <exception>

#include "cli/command_line.h"

// Bad input is reported where it is found, as a value. This catch is the last line only: an
// exception that still gets here is a bug in xprobe, said in one line with a failing status
// instead of std::terminate's abort (and, while tracing, a process left stopped).
int main(int argc, char** argv) {
  try {
    return xprobe::cli::run_command_line(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xprobe: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "xprobe: internal error: an unknown exception\n");
  }
  return 1;
}
