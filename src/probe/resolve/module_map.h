#pragma once
// The objects a process has mapped (executable, shared libraries), each with its ELF file
// and load bias: the bridge between link-time addresses in ELF files and addresses in the
// running process.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.h"
#include "support/result.h"
#include "target/maps.h"

namespace xprobe::probe {

struct LoadedModule {
  std::string path;      // as the kernel names it in /proc/PID/maps
  uint64_t bias = 0;     // runtime address = link-time address + bias
  uint64_t low = 0;      // lowest and one-past-highest mapped address of the object
  uint64_t high = 0;
  std::shared_ptr<const elf::ElfFile> elf;
};

// Opened ELF files are cached by path: re-reading libc for every probe would dominate attach time.
class ElfCache {
 public:
  Result<std::shared_ptr<const elf::ElfFile>> open(const std::string& path);

 private:
  std::map<std::string, std::shared_ptr<const elf::ElfFile>> files_;
  std::map<std::string, std::string> failures_;
};

class ModuleMap {
 public:
  // Builds the module list from a maps snapshot. `root_prefix` lets a tracer read the files
  // through /proc/PID/root (a process in another mount namespace); empty = the paths as they are.
  static ModuleMap from_maps(const std::vector<target::MapEntry>& maps, ElfCache& cache, const std::string& main_executable,
                             const std::string& root_prefix = {});

  const std::vector<LoadedModule>& modules() const { return modules_; }
  const LoadedModule* main_executable() const;
  // A module by full path or by file name ("libc.so.6"), as uprobe_events definitions name them.
  const LoadedModule* find(std::string_view name_or_path) const;
  const LoadedModule* containing(uint64_t address) const;

 private:
  std::vector<LoadedModule> modules_;
  std::string main_path_;
};

// The bias of an ELF object mapped at `mapping` (which maps file offset mapping.offset).
std::optional<uint64_t> load_bias(const elf::ElfFile& file, const target::MapEntry& mapping);

}  // namespace xprobe::probe
