#include "x86_diff/code_section.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>

namespace xprobe::test::x86 {

namespace {

// Closes the descriptor and the libelf handle on every path out of read_code_section.
class ElfFile {
 public:
  explicit ElfFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ >= 0 && elf_version(EV_CURRENT) != EV_NONE) elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
  }
  ~ElfFile() {
    if (elf_ != nullptr) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  int fd() const { return fd_; }
  Elf* elf() const { return elf_; }

 private:
  int fd_;
  Elf* elf_ = nullptr;
};

}  // namespace

Result<CodeSection> read_code_section(const std::string& path, const std::string& section_name) {
  ElfFile file(path);
  if (file.fd() < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
  if (file.elf() == nullptr || elf_kind(file.elf()) != ELF_K_ELF)
    return make_error(path + " is not an ELF file: " + elf_errmsg(-1));
  size_t names_index = 0;
  if (elf_getshdrstrndx(file.elf(), &names_index) != 0) return make_error(path + ": " + elf_errmsg(-1));

  for (Elf_Scn* scn = elf_nextscn(file.elf(), nullptr); scn != nullptr; scn = elf_nextscn(file.elf(), scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    const char* name = elf_strptr(file.elf(), names_index, header.sh_name);
    if (name == nullptr || section_name != name) continue;
    if (header.sh_type != SHT_PROGBITS) return make_error(path + ": section " + section_name + " has no file bytes");
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) return make_error(path + ": cannot read " + section_name);
    CodeSection section;
    const auto* begin = static_cast<const uint8_t*>(data->d_buf);
    section.bytes.assign(begin, begin + data->d_size);
    section.address = header.sh_addr;
    section.elf64 = gelf_getclass(file.elf()) == ELFCLASS64;
    return section;
  }
  return make_error(path + " has no section " + section_name);
}

}  // namespace xprobe::test::x86
