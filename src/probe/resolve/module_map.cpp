#include "probe/resolve/module_map.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>

namespace xprobe::probe {
namespace {

constexpr uint64_t kPageMask = ~uint64_t{0xfff};

std::string_view file_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

Result<std::shared_ptr<const elf::ElfFile>> ElfCache::open(const std::string& path) {
  if (auto it = files_.find(path); it != files_.end()) return it->second;
  if (auto it = failures_.find(path); it != failures_.end()) return make_error(it->second);
  auto file = elf::ElfFile::open(path);
  if (!file) {
    failures_[path] = file.error().message;
    return file.error();
  }
  auto shared = std::make_shared<const elf::ElfFile>(std::move(file.value()));
  files_[path] = shared;
  return shared;
}

std::optional<uint64_t> load_bias(const elf::ElfFile& file, const target::MapEntry& mapping) {
  for (const elf::LoadSegment& segment : file.load_segments())
    if ((segment.file_offset & kPageMask) == mapping.offset) return mapping.start - (segment.vaddr & kPageMask);
  return std::nullopt;
}

ModuleMap ModuleMap::from_maps(const std::vector<target::MapEntry>& maps, ElfCache& cache,
                               const std::string& main_executable, const std::string& root_prefix) {
  ModuleMap result;
  result.main_path_ = main_executable;
  for (const target::MapEntry& entry : maps) {
    if (entry.path.empty() || entry.path[0] != '/') continue;  // anonymous, [heap], [vdso], ...
    auto existing = std::find_if(result.modules_.begin(), result.modules_.end(),
                                 [&](const LoadedModule& m) { return m.path == entry.path; });
    if (existing != result.modules_.end()) {
      existing->low = std::min(existing->low, entry.start);
      existing->high = std::max(existing->high, entry.end);
      continue;
    }
    auto elf = cache.open(root_prefix + entry.path);
    if (!elf) continue;  // a mapped data file, not an ELF object
    auto bias = load_bias(**elf, entry);
    if (!bias) continue;
    result.modules_.push_back({entry.path, *bias, entry.start, entry.end, *elf});
  }
  return result;
}

const LoadedModule* ModuleMap::main_executable() const {
  for (const LoadedModule& module : modules_)
    if (module.path == main_path_) return &module;
  return nullptr;
}

const LoadedModule* ModuleMap::find(std::string_view name_or_path) const {
  for (const LoadedModule& module : modules_)
    if (module.path == name_or_path) return &module;
  if (name_or_path.find('/') != std::string_view::npos) {
    // The kernel names mapped files by their real path: resolve symlinks (libfoo.so.1 ->
    // libfoo.so.1.2.3) and relative paths the way it did.
    char real[PATH_MAX];
    if (realpath(std::string(name_or_path).c_str(), real) == nullptr) return nullptr;
    for (const LoadedModule& module : modules_)
      if (module.path == real) return &module;
    return nullptr;
  }
  // A bare name is the file's name or its DT_SONAME (what ldd and the dynamic linker call it).
  for (const LoadedModule& module : modules_)
    if (file_name(module.path) == name_or_path || module.elf->soname() == name_or_path) return &module;
  return nullptr;
}

const LoadedModule* ModuleMap::containing(uint64_t address) const {
  for (const LoadedModule& module : modules_)
    if (address >= module.low && address < module.high) return &module;
  return nullptr;
}

}  // namespace xprobe::probe
