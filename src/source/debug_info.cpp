#include "source/debug_info.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace xprobe::source {
namespace {

bool has_debug_info(Elf* elf) {
  size_t string_index = 0;
  if (elf_getshdrstrndx(elf, &string_index) != 0) return false;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr) continue;
    const char* name = elf_strptr(elf, string_index, header.sh_name);
    if (name != nullptr && std::strcmp(name, ".debug_info") == 0 && header.sh_type != SHT_NOBITS) return true;
  }
  return false;
}

// The CRC-32 that .gnu_debuglink stores (ISO 3309, as zlib's crc32).
uint32_t file_crc32(int fd) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  std::array<unsigned char, 65536> buffer;
  off_t position = 0;
  for (;;) {
    const ssize_t got = pread(fd, buffer.data(), buffer.size(), position);
    if (got <= 0) break;
    for (ssize_t i = 0; i < got; ++i) crc = table[(crc ^ buffer[static_cast<size_t>(i)]) & 0xff] ^ (crc >> 8);
    position += got;
  }
  return crc ^ 0xffffffffu;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

struct OpenedElf {
  int fd = -1;
  Elf* elf = nullptr;
};

OpenedElf open_elf(const std::string& path) {
  OpenedElf opened;
  opened.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (opened.fd < 0) return opened;
  opened.elf = elf_begin(opened.fd, ELF_C_READ_MMAP, nullptr);
  if (opened.elf == nullptr || elf_kind(opened.elf) != ELF_K_ELF) {
    if (opened.elf != nullptr) elf_end(opened.elf);
    ::close(opened.fd);
    return {};
  }
  return opened;
}

void close_elf(OpenedElf& opened) {
  if (opened.elf != nullptr) elf_end(opened.elf);
  if (opened.fd >= 0) ::close(opened.fd);
  opened = {};
}

}  // namespace

std::vector<std::string> debug_file_directories() {
  std::vector<std::string> directories;
  const char* configured = std::getenv("XPROBE_DEBUG_FILE_DIRECTORY");
  std::string list = configured != nullptr && *configured != '\0' ? configured : "/usr/lib/debug";
  size_t start = 0;
  while (start <= list.size()) {
    const size_t colon = list.find(':', start);
    const std::string entry = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!entry.empty()) directories.push_back(entry);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return directories;
}

std::string build_id_of(Elf* elf) {
  const void* bytes = nullptr;
  const ssize_t size = dwelf_elf_gnu_build_id(elf, &bytes);
  if (size <= 0) return {};
  std::string hex;
  for (ssize_t i = 0; i < size; ++i) hex += fmt::format("{:02x}", static_cast<const unsigned char*>(bytes)[i]);
  return hex;
}

Result<std::unique_ptr<DebugInfo>> DebugInfo::open(const std::string& object_path) {
  elf_version(EV_CURRENT);
  std::unique_ptr<DebugInfo> info(new DebugInfo());
  info->object_path_ = object_path;
  OpenedElf object = open_elf(object_path);
  if (object.elf == nullptr) return make_error(fmt::format("{}: cannot be read as an ELF object", object_path));
  info->object_fd_ = object.fd;
  info->object_elf_ = object.elf;
  GElf_Ehdr header;
  if (gelf_getehdr(object.elf, &header) == nullptr) return make_error(fmt::format("{}: no ELF header", object_path));
  info->arch_ = header.e_machine == EM_AARCH64 ? insn::Arch::AArch64
                : header.e_machine == EM_386   ? insn::Arch::I386
                                               : insn::Arch::X86_64;

  std::vector<std::string> tried;
  OpenedElf debug;
  if (has_debug_info(object.elf)) {
    debug = object;
    info->debug_path_ = object_path;
  } else {
    const std::string build_id = build_id_of(object.elf);
    if (build_id.size() > 2) {
      for (const std::string& directory : debug_file_directories()) {
        const std::string path = fmt::format("{}/.build-id/{}/{}.debug", directory, build_id.substr(0, 2), build_id.substr(2));
        tried.push_back(path);
        OpenedElf candidate = open_elf(path);
        if (candidate.elf != nullptr && has_debug_info(candidate.elf) && build_id_of(candidate.elf) == build_id) {
          debug = candidate;
          info->debug_path_ = path;
          break;
        }
        close_elf(candidate);
      }
    }
    GElf_Word crc = 0;
    const char* link = debug.elf == nullptr ? dwelf_elf_gnu_debuglink(object.elf, &crc) : nullptr;
    if (link != nullptr && std::strchr(link, '/') == nullptr) {
      const std::string directory = directory_of(object_path);
      std::vector<std::string> candidates = {directory + "/" + link, directory + "/.debug/" + link};
      for (const std::string& root : debug_file_directories())
        candidates.push_back(root + (directory.front() == '/' ? "" : "/") + directory + "/" + link);
      for (const std::string& path : candidates) {
        if (path == object_path) continue;
        tried.push_back(path);
        OpenedElf candidate = open_elf(path);
        if (candidate.elf != nullptr && has_debug_info(candidate.elf) && file_crc32(candidate.fd) == crc) {
          debug = candidate;
          info->debug_path_ = path;
          break;
        }
        close_elf(candidate);
      }
    }
    if (debug.elf == nullptr) {
      std::string message = fmt::format("{}: no debug information (no .debug_info", object_path);
      if (tried.empty()) message += ", no build id and no .gnu_debuglink";
      else message += fmt::format("; tried {}", fmt::join(tried, ", "));
      message += ")";
      return make_error(message);
    }
  }
  if (debug.elf != object.elf) {
    info->debug_fd_ = debug.fd;
    info->debug_elf_ = debug.elf;
  } else {
    info->debug_elf_ = object.elf;
  }
  info->dwarf_ = dwarf_begin_elf(info->debug_elf_, DWARF_C_READ, nullptr);
  if (info->dwarf_ == nullptr)
    return make_error(fmt::format("{}: its DWARF cannot be read: {}", info->debug_path_, dwarf_errmsg(-1)));
  info->eh_cfi_ = dwarf_getcfi_elf(info->object_elf_);
  info->debug_cfi_ = dwarf_getcfi(info->dwarf_);
  return info;
}

DebugInfo::~DebugInfo() {
  if (eh_cfi_ != nullptr) dwarf_cfi_end(eh_cfi_);
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
  if (debug_elf_ != nullptr && debug_elf_ != object_elf_) elf_end(debug_elf_);
  if (debug_fd_ >= 0) ::close(debug_fd_);
  if (object_elf_ != nullptr) elf_end(object_elf_);
  if (object_fd_ >= 0) ::close(object_fd_);
}

}  // namespace xprobe::source
