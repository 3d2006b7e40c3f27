#include "source/sdt_markers.h"
#include "support/number_text.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <fmt/format.h>

#include "arch/source_registers.h"

namespace xprobe::source {
namespace {

constexpr uint32_t kStapsdtNoteType = 3;

uint64_t read_word(const uint8_t* bytes, unsigned size) {
  uint64_t value = 0;
  std::memcpy(&value, bytes, size);  // every architecture xprobe traces is little-endian
  return value;
}

}  // namespace

Result<std::vector<SdtMarker>> read_sdt_markers(const std::string& path) {
  elf_version(EV_CURRENT);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  struct Closer {
    int fd;
    Elf* elf;
    ~Closer() {
      if (elf != nullptr) elf_end(elf);
      ::close(fd);
    }
  } closer{fd, elf};
  GElf_Ehdr header;
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &header) == nullptr)
    return make_error(fmt::format("{}: not an ELF object", path));
  const unsigned word = header.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
  size_t string_index = 0;
  if (elf_getshdrstrndx(elf, &string_index) != 0) return make_error(fmt::format("{}: no section names", path));
  std::optional<uint64_t> base_address;
  std::vector<std::pair<size_t, std::span<const uint8_t>>> notes;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
    GElf_Shdr section_header;
    if (gelf_getshdr(section, &section_header) == nullptr) continue;
    const char* name = elf_strptr(elf, string_index, section_header.sh_name);
    if (name == nullptr) continue;
    if (std::strcmp(name, ".stapsdt.base") == 0) base_address = section_header.sh_addr;
    if (std::strcmp(name, ".note.stapsdt") != 0 || section_header.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_rawdata(section, nullptr);
    if (data == nullptr || data->d_buf == nullptr) continue;
    notes.emplace_back(0, std::span<const uint8_t>(static_cast<const uint8_t*>(data->d_buf), data->d_size));
  }
  std::vector<SdtMarker> markers;
  for (const auto& [unused, bytes] : notes) {
    size_t at = 0;
    while (at + 12 <= bytes.size()) {
      const uint32_t name_size = static_cast<uint32_t>(read_word(&bytes[at], 4));
      const uint32_t desc_size = static_cast<uint32_t>(read_word(&bytes[at + 4], 4));
      const uint32_t type = static_cast<uint32_t>(read_word(&bytes[at + 8], 4));
      const size_t name_at = at + 12;
      const size_t desc_at = name_at + ((static_cast<size_t>(name_size) + 3) & ~size_t{3});
      const size_t next = desc_at + ((static_cast<size_t>(desc_size) + 3) & ~size_t{3});
      if (next > bytes.size() || desc_at > bytes.size())
        return make_error(fmt::format("{}: a note of .note.stapsdt at +{:#x} runs past its section", path, at));
      const bool is_stapsdt = name_size == 8 && std::memcmp(&bytes[name_at], "stapsdt", 8) == 0;
      if (type == kStapsdtNoteType && is_stapsdt) {
        if (desc_size < 3 * word + 3)
          return make_error(fmt::format("{}: the SDT note at +{:#x} is too short", path, at));
        const uint8_t* desc = &bytes[desc_at];
        SdtMarker marker;
        marker.pc = read_word(desc, word);
        const uint64_t note_base = read_word(desc + word, word);
        marker.semaphore = read_word(desc + 2 * word, word);
        // Three NUL-terminated strings follow, all inside the descriptor.
        std::string_view strings(reinterpret_cast<const char*>(desc + 3 * word), desc_size - 3 * word);
        std::string* fields[] = {&marker.provider, &marker.name, &marker.arguments};
        for (std::string* field : fields) {
          const size_t nul = strings.find('\0');
          if (nul == std::string_view::npos)
            return make_error(fmt::format("{}: the SDT note at +{:#x} has an unterminated string", path, at));
          *field = std::string(strings.substr(0, nul));
          strings.remove_prefix(nul + 1);
        }
        if (marker.provider.empty() || marker.name.empty())
          return make_error(fmt::format("{}: the SDT note at +{:#x} has no provider or name", path, at));
        // A prelinked object moved: the note recorded where .stapsdt.base was at link time.
        if (base_address && note_base != 0) {
          marker.pc += *base_address - note_base;
          if (marker.semaphore != 0) marker.semaphore += *base_address - note_base;
        }
        markers.push_back(std::move(marker));
      }
      at = next;
    }
  }
  return markers;
}

std::vector<std::string> split_sdt_arguments(std::string_view arguments) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < arguments.size()) {
    const size_t space = arguments.find(' ', start);
    const std::string_view word = arguments.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start);
    if (!word.empty()) out.emplace_back(word);
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return out;
}

Result<SdtArgument> translate_sdt_argument(std::string_view argument, insn::Arch arch) {
  auto bad = [&](std::string_view why) { return make_error(fmt::format("SDT argument '{}': {}", argument, why)); };
  const size_t at = argument.find('@');
  if (at == std::string_view::npos) return bad("no SIZE@ before the operand");
  const auto size = parse_signed_decimal_or_hex(argument.substr(0, at));
  if (!size || (std::abs(*size) != 1 && std::abs(*size) != 2 && std::abs(*size) != 4 && std::abs(*size) != 8))
    return bad("its size is not 1, 2, 4 or 8 bytes (negative: signed)");
  SdtArgument out;
  out.type = fmt::format("{}{}", *size < 0 ? 's' : 'u', std::abs(*size) * 8);
  auto fetcharg = arch::sdt_operand_fetcharg(arch, argument.substr(at + 1));
  if (!fetcharg) return bad(fetcharg.error().message);
  out.fetcharg = std::move(*fetcharg);
  return out;
}

}  // namespace xprobe::source
