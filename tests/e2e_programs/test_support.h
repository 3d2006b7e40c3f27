#pragma once
// Helpers for tests that trace the programs in this folder: untraced reference runs,
// stdout capture of traced runs, and symbol addresses (libelf, independent of src/elf).
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xprobe::testing {

// The path of a built e2e program ("counter" -> <build>/tests/e2e_programs/counter).
std::string e2e_program(const std::string& name);

struct RunResult {
  std::string output;   // stdout
  int exit_status = -1; // exit code, or 128 + signal
};

// Runs argv untraced and collects its stdout and exit status.
RunResult run_untraced(const std::vector<std::string>& argv);

// Reads `output_fd` (a child's stdout) to its end, closes it and reaps child `pid`: what a
// test compares with run_untraced(). exit_status is -1 when `pid` could not be reaped.
RunResult finish_child(int output_fd, pid_t pid);

// While alive, file descriptor 1 points at a temporary file (so that a program launched
// meanwhile writes there); text() reads what was written so far.
class CapturedStdout {
 public:
  CapturedStdout();
  ~CapturedStdout();
  void restore();  // fd 1 back to normal (the launched program keeps the file)
  std::string text() const;

 private:
  std::string path_;
  int saved_fd_ = -1;
};

// The st_value of a symbol in the ELF file (.symtab, then .dynsym); 0 when absent.
uint64_t symbol_value(const std::string& elf_path, const std::string& symbol);
// Its st_size; 0 when absent.
uint64_t symbol_size(const std::string& elf_path, const std::string& symbol);
// Where `elf_path` is loaded in `pid` (load bias: add to st_value); 0 for ET_EXEC.
uint64_t load_bias(pid_t pid, const std::string& elf_path);
// The absolute address of `symbol` of the object at `elf_path` in process `pid`.
uint64_t symbol_address(pid_t pid, const std::string& elf_path, const std::string& symbol);
// The path of the mapped object in `pid` whose file name starts with `prefix` ("libc.so").
std::string mapped_object(pid_t pid, const std::string& prefix);

}  // namespace xprobe::testing
