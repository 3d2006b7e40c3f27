#include "test_support.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "target/maps.h"

namespace xprobe::testing {

std::string e2e_program(const std::string& name) { return std::string(XPROBE_E2E_DIR) + "/" + name; }

RunResult run_untraced(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  RunResult result;
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof buffer)) > 0) result.output.append(buffer, static_cast<size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CapturedStdout::CapturedStdout() {
  char name[] = "/tmp/xprobe-stdout-XXXXXX";
  int fd = mkstemp(name);
  path_ = name;
  fflush(stdout);
  saved_fd_ = dup(1);
  dup2(fd, 1);
  close(fd);
}

void CapturedStdout::restore() {
  if (saved_fd_ < 0) return;
  fflush(stdout);
  dup2(saved_fd_, 1);
  close(saved_fd_);
  saved_fd_ = -1;
}

CapturedStdout::~CapturedStdout() {
  restore();
  unlink(path_.c_str());
}

std::string CapturedStdout::text() const {
  std::ifstream file(path_);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

namespace {

struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  explicit ElfFile(const std::string& path) {
    elf_version(EV_CURRENT);
    fd = open(path.c_str(), O_RDONLY);
    if (fd >= 0) elf = elf_begin(fd, ELF_C_READ, nullptr);
  }
  ~ElfFile() {
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

}  // namespace

namespace {

bool find_symbol(const std::string& elf_path, const std::string& symbol, GElf_Sym& found) {
  ElfFile file(elf_path);
  if (!file.elf) return false;
  for (Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
    Elf_Scn* section = nullptr;
    while ((section = elf_nextscn(file.elf, section)) != nullptr) {
      GElf_Shdr header;
      if (!gelf_getshdr(section, &header) || header.sh_type != wanted) continue;
      Elf_Data* data = elf_getdata(section, nullptr);
      size_t count = header.sh_entsize ? header.sh_size / header.sh_entsize : 0;
      for (size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_value == 0) continue;
        const char* name = elf_strptr(file.elf, header.sh_link, sym.st_name);
        if (name && symbol == name) {
          found = sym;
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace

uint64_t symbol_value(const std::string& elf_path, const std::string& symbol) {
  GElf_Sym sym;
  return find_symbol(elf_path, symbol, sym) ? sym.st_value : 0;
}

uint64_t symbol_size(const std::string& elf_path, const std::string& symbol) {
  GElf_Sym sym;
  return find_symbol(elf_path, symbol, sym) ? sym.st_size : 0;
}

uint64_t load_bias(pid_t pid, const std::string& elf_path) {
  ElfFile file(elf_path);
  if (!file.elf) return 0;
  GElf_Ehdr header;
  if (!gelf_getehdr(file.elf, &header) || header.e_type != ET_DYN) return 0;
  uint64_t first_vaddr = UINT64_MAX;
  size_t count = 0;
  elf_getphdrnum(file.elf, &count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr program;
    if (gelf_getphdr(file.elf, static_cast<int>(i), &program) && program.p_type == PT_LOAD && program.p_vaddr < first_vaddr) {
      first_vaddr = program.p_vaddr & ~uint64_t{0xfff};
    }
  }
  char resolved[PATH_MAX];
  std::string real = realpath(elf_path.c_str(), resolved) ? resolved : elf_path;
  auto maps = target::read_maps(pid);
  if (!maps) return 0;
  for (const target::MapEntry& entry : *maps) {
    if (entry.path == real && entry.offset == 0) return entry.start - first_vaddr;
  }
  return 0;
}

uint64_t symbol_address(pid_t pid, const std::string& elf_path, const std::string& symbol) {
  uint64_t value = symbol_value(elf_path, symbol);
  if (value == 0) return 0;
  return value + load_bias(pid, elf_path);
}

std::string mapped_object(pid_t pid, const std::string& prefix) {
  auto maps = target::read_maps(pid);
  if (!maps) return "";
  for (const target::MapEntry& entry : *maps) {
    size_t slash = entry.path.rfind('/');
    if (slash == std::string::npos) continue;
    if (entry.path.compare(slash + 1, prefix.size(), prefix) == 0) return entry.path;
  }
  return "";
}

RunResult finish_child(int output_fd, pid_t pid) {
  RunResult result;
  char buffer[256];
  ssize_t got;
  while ((got = ::read(output_fd, buffer, sizeof buffer)) > 0) result.output.append(buffer, static_cast<size_t>(got));
  ::close(output_fd);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return result;
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace xprobe::testing
