#include "elf_mutations.h"

#include <elf.h>

#include <cstring>
#include <random>

#include <fmt/format.h>

namespace xprobe::torture {
namespace {

// Values that break naive bounds arithmetic: zero, the file's end, sign and width edges.
std::vector<uint64_t> hostile_values(size_t file_size) {
  return {0, 1, file_size - 1, file_size, file_size + 1, 0x7fffffff, 0x80000000, 0xffffffff,
          0x7fffffffffffffffULL, 0x8000000000000000ULL, 0xfffffffffffff000ULL, 0xffffffffffffffffULL};
}

template <typename Field>
void put(std::vector<uint8_t>& bytes, size_t offset, uint64_t value) {
  if (offset + sizeof(Field) > bytes.size()) return;
  const Field narrowed = static_cast<Field>(value);
  std::memcpy(bytes.data() + offset, &narrowed, sizeof(Field));
}

template <typename Field>
Field get(const std::vector<uint8_t>& bytes, size_t offset) {
  Field value{};
  if (offset + sizeof(Field) <= bytes.size()) std::memcpy(&value, bytes.data() + offset, sizeof(Field));
  return value;
}

struct FieldSpot {
  const char* name;
  size_t offset;  // inside the structure
  size_t width;   // bytes
};

void set_field(std::vector<uint8_t>& bytes, size_t at, size_t width, uint64_t value) {
  switch (width) {
    case 1: put<uint8_t>(bytes, at, value); break;
    case 2: put<uint16_t>(bytes, at, value); break;
    case 4: put<uint32_t>(bytes, at, value); break;
    default: put<uint64_t>(bytes, at, value); break;
  }
}

}  // namespace

std::vector<MutatedElf> mutate_elf(const std::vector<uint8_t>& original, uint32_t seed, size_t count_random) {
  std::vector<MutatedElf> out;
  if (original.size() < sizeof(Elf64_Ehdr)) return out;
  const bool is64 = original[EI_CLASS] == ELFCLASS64;
  const auto values = hostile_values(original.size());

  // Truncations: inside the ELF header, at the ends of the program and section header
  // tables and of every section, and at a few fractions of the file.
  std::vector<size_t> cuts{0, 1, 4, 5, 16, 20, 24, 40, 52, 63, 64};
  Elf64_Ehdr eh64{};
  Elf32_Ehdr eh32{};
  uint64_t shoff = 0, phoff = 0;
  size_t shnum = 0, shentsize = 0, phnum = 0, phentsize = 0;
  if (is64) {
    std::memcpy(&eh64, original.data(), sizeof eh64);
    shoff = eh64.e_shoff; phoff = eh64.e_phoff; shnum = eh64.e_shnum; shentsize = eh64.e_shentsize;
    phnum = eh64.e_phnum; phentsize = eh64.e_phentsize;
  } else {
    std::memcpy(&eh32, original.data(), sizeof eh32);
    shoff = eh32.e_shoff; phoff = eh32.e_phoff; shnum = eh32.e_shnum; shentsize = eh32.e_shentsize;
    phnum = eh32.e_phnum; phentsize = eh32.e_phentsize;
  }
  cuts.push_back(static_cast<size_t>(phoff + phentsize / 2));
  cuts.push_back(static_cast<size_t>(phoff + phnum * phentsize));
  cuts.push_back(static_cast<size_t>(shoff));
  cuts.push_back(static_cast<size_t>(shoff + shentsize * shnum / 2));
  cuts.push_back(static_cast<size_t>(shoff + shentsize * shnum - 1));
  for (int eighth = 1; eighth < 8; ++eighth) cuts.push_back(original.size() * static_cast<size_t>(eighth) / 8);
  const bool sections_in_file = shentsize != 0 && shoff + shentsize * shnum <= original.size();
  // Every section's end and middle (symbol and string tables cut short).
  if (sections_in_file)
    for (size_t i = 0; i < shnum; ++i) {
      const size_t at = static_cast<size_t>(shoff + i * shentsize);
      const uint64_t offset = is64 ? get<uint64_t>(original, at + offsetof(Elf64_Shdr, sh_offset))
                                   : get<uint32_t>(original, at + offsetof(Elf32_Shdr, sh_offset));
      const uint64_t size = is64 ? get<uint64_t>(original, at + offsetof(Elf64_Shdr, sh_size))
                                 : get<uint32_t>(original, at + offsetof(Elf32_Shdr, sh_size));
      cuts.push_back(static_cast<size_t>(offset + size / 2));
    }
  for (size_t cut : cuts) {
    if (cut >= original.size()) continue;
    out.push_back({fmt::format("truncated at {}", cut), std::vector<uint8_t>(original.begin(), original.begin() + static_cast<long>(cut))});
  }

  // ELF header fields.
  const std::vector<FieldSpot> header_fields =
      is64 ? std::vector<FieldSpot>{{"e_ident[EI_CLASS]", EI_CLASS, 1}, {"e_ident[EI_DATA]", EI_DATA, 1},
                                    {"e_type", offsetof(Elf64_Ehdr, e_type), 2}, {"e_machine", offsetof(Elf64_Ehdr, e_machine), 2},
                                    {"e_phoff", offsetof(Elf64_Ehdr, e_phoff), 8}, {"e_shoff", offsetof(Elf64_Ehdr, e_shoff), 8},
                                    {"e_phentsize", offsetof(Elf64_Ehdr, e_phentsize), 2}, {"e_phnum", offsetof(Elf64_Ehdr, e_phnum), 2},
                                    {"e_shentsize", offsetof(Elf64_Ehdr, e_shentsize), 2}, {"e_shnum", offsetof(Elf64_Ehdr, e_shnum), 2},
                                    {"e_shstrndx", offsetof(Elf64_Ehdr, e_shstrndx), 2}}
           : std::vector<FieldSpot>{{"e_ident[EI_CLASS]", EI_CLASS, 1}, {"e_ident[EI_DATA]", EI_DATA, 1},
                                    {"e_type", offsetof(Elf32_Ehdr, e_type), 2}, {"e_machine", offsetof(Elf32_Ehdr, e_machine), 2},
                                    {"e_phoff", offsetof(Elf32_Ehdr, e_phoff), 4}, {"e_shoff", offsetof(Elf32_Ehdr, e_shoff), 4},
                                    {"e_phentsize", offsetof(Elf32_Ehdr, e_phentsize), 2}, {"e_phnum", offsetof(Elf32_Ehdr, e_phnum), 2},
                                    {"e_shentsize", offsetof(Elf32_Ehdr, e_shentsize), 2}, {"e_shnum", offsetof(Elf32_Ehdr, e_shnum), 2},
                                    {"e_shstrndx", offsetof(Elf32_Ehdr, e_shstrndx), 2}};
  for (const FieldSpot& field : header_fields)
    for (uint64_t value : values) {
      auto bytes = original;
      set_field(bytes, field.offset, field.width, value);
      out.push_back({fmt::format("{}={:#x}", field.name, value), std::move(bytes)});
    }

  // Section header fields, for every section (64-bit files; 32-bit ones get the random flips).
  if (is64 && sections_in_file) {
    const std::vector<FieldSpot> section_fields{
        {"sh_name", offsetof(Elf64_Shdr, sh_name), 4},       {"sh_type", offsetof(Elf64_Shdr, sh_type), 4},
        {"sh_addr", offsetof(Elf64_Shdr, sh_addr), 8},       {"sh_offset", offsetof(Elf64_Shdr, sh_offset), 8},
        {"sh_size", offsetof(Elf64_Shdr, sh_size), 8},       {"sh_link", offsetof(Elf64_Shdr, sh_link), 4},
        {"sh_entsize", offsetof(Elf64_Shdr, sh_entsize), 8}, {"sh_flags", offsetof(Elf64_Shdr, sh_flags), 8}};
    for (size_t i = 0; i < shnum; ++i)
      for (const FieldSpot& field : section_fields)
        for (uint64_t value : {uint64_t{0}, uint64_t{original.size()}, uint64_t{0x7fffffff}, ~uint64_t{0},
                               ~uint64_t{0} - 0xfff}) {
          auto bytes = original;
          set_field(bytes, static_cast<size_t>(shoff + i * shentsize + field.offset), field.width, value);
          out.push_back({fmt::format("shdr[{}].{}={:#x}", i, field.name, value), std::move(bytes)});
        }
    // Symbols whose value, size or name points outside everything.
    for (size_t i = 0; i < shnum; ++i) {
      const size_t at = static_cast<size_t>(shoff + i * shentsize);
      const uint32_t type = get<uint32_t>(original, at + offsetof(Elf64_Shdr, sh_type));
      if (type != SHT_SYMTAB && type != SHT_DYNSYM) continue;
      const uint64_t offset = get<uint64_t>(original, at + offsetof(Elf64_Shdr, sh_offset));
      const uint64_t size = get<uint64_t>(original, at + offsetof(Elf64_Shdr, sh_size));
      const size_t count = static_cast<size_t>(size / sizeof(Elf64_Sym));
      for (size_t s = 1; s < count; s += 1 + count / 12) {
        const size_t sym = static_cast<size_t>(offset + s * sizeof(Elf64_Sym));
        for (auto [name, field_offset, width] : std::vector<FieldSpot>{{"st_value", offsetof(Elf64_Sym, st_value), 8},
                                                                       {"st_size", offsetof(Elf64_Sym, st_size), 8},
                                                                       {"st_name", offsetof(Elf64_Sym, st_name), 4},
                                                                       {"st_shndx", offsetof(Elf64_Sym, st_shndx), 2}})
          for (uint64_t value : {~uint64_t{0}, ~uint64_t{0} - 0xf, uint64_t{0x7fffffff}}) {
            auto bytes = original;
            set_field(bytes, sym + field_offset, width, value);
            out.push_back({fmt::format("shdr[{}] sym[{}].{}={:#x}", i, s, name, value), std::move(bytes)});
          }
      }
    }
  }

  // A section placed at the top of the address space with a size-less function symbol inside
  // it: "address + size" wraps around zero (bounds arithmetic must not).
  if (is64 && sections_in_file) {
    for (size_t i = 0; i < shnum; ++i) {
      const size_t at = static_cast<size_t>(shoff + i * shentsize);
      const uint32_t type = get<uint32_t>(original, at + offsetof(Elf64_Shdr, sh_type));
      if (type != SHT_SYMTAB && type != SHT_DYNSYM) continue;
      const uint64_t offset = get<uint64_t>(original, at + offsetof(Elf64_Shdr, sh_offset));
      const uint64_t size = get<uint64_t>(original, at + offsetof(Elf64_Shdr, sh_size));
      const size_t count = static_cast<size_t>(size / sizeof(Elf64_Sym));
      for (size_t s = 1; s < count; s += 1 + count / 6) {
        const size_t sym = static_cast<size_t>(offset + s * sizeof(Elf64_Sym));
        const uint16_t shndx = get<uint16_t>(original, sym + offsetof(Elf64_Sym, st_shndx));
        if (shndx == 0 || shndx >= shnum) continue;
        const size_t target = static_cast<size_t>(shoff + shndx * shentsize);
        for (uint64_t top : {~uint64_t{0} - 0xf, ~uint64_t{0} - 0xfff}) {
          auto bytes = original;
          put<uint64_t>(bytes, target + offsetof(Elf64_Shdr, sh_addr), top);
          put<uint64_t>(bytes, target + offsetof(Elf64_Shdr, sh_flags), SHF_ALLOC | SHF_EXECINSTR);
          put<uint64_t>(bytes, sym + offsetof(Elf64_Sym, st_value), top + 4);
          put<uint64_t>(bytes, sym + offsetof(Elf64_Sym, st_size), 0);
          put<uint8_t>(bytes, sym + offsetof(Elf64_Sym, st_info), ELF64_ST_INFO(STB_GLOBAL, STT_FUNC));
          out.push_back({fmt::format("shdr[{}].sh_addr={:#x} with sym[{}] inside, no size", shndx, top, s), std::move(bytes)});
        }
      }
    }
  }

  // Random flips, biased towards the headers where structure lives.
  std::mt19937 random(seed);
  for (size_t n = 0; n < count_random; ++n) {
    auto bytes = original;
    const size_t flips = 1 + random() % 16;
    std::string how = "flips";
    for (size_t f = 0; f < flips; ++f) {
      size_t at;
      const unsigned where = random() % 4;
      if (where == 0) at = random() % 64;
      else if (where == 1 && sections_in_file) at = static_cast<size_t>(shoff + random() % (shentsize * shnum));
      else at = random() % bytes.size();
      const uint8_t value = static_cast<uint8_t>(random());
      bytes[at] = value;
      how += fmt::format(" [{}]={:#04x}", at, value);
    }
    out.push_back({std::move(how), std::move(bytes)});
  }
  return out;
}

}  // namespace xprobe::torture
