#include "elf/elf_file.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "elf/exception_tables.h"
#include "elf/symbol_glob.h"
#include "support/regular_file.h"

namespace xprobe::elf {
namespace {

struct ElfHandleCloser {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfHandle = std::unique_ptr<Elf, ElfHandleCloser>;

struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

std::string demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return {};
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return {};
  std::string result(out);
  std::free(out);
  return result;
}

// "ns::f(int, char)" -> "ns::f": lets users write C++ names without parameter lists.
std::string_view without_parameters(std::string_view demangled) {
  if (demangled.empty() || demangled.back() != ')') return demangled;
  int depth = 0;
  for (size_t i = demangled.size(); i-- > 0;) {
    if (demangled[i] == ')') ++depth;
    if (demangled[i] == '(' && --depth == 0) return demangled.substr(0, i);
  }
  return demangled;
}

// The relocations of one SHT_RELA section that fill GOT slots with function addresses. The
// symbol names come from the section's sh_link symbol table (.dynsym).
void read_got_slots(Elf* elf, Elf_Scn* scn, const GElf_Shdr& sh, unsigned machine, std::vector<GotSlot>& out) {
  unsigned irelative = 0, glob_dat = 0, jump_slot = 0;
  switch (machine) {
    case EM_X86_64: irelative = R_X86_64_IRELATIVE; glob_dat = R_X86_64_GLOB_DAT; jump_slot = R_X86_64_JUMP_SLOT; break;
    case EM_AARCH64: irelative = R_AARCH64_IRELATIVE; glob_dat = R_AARCH64_GLOB_DAT; jump_slot = R_AARCH64_JUMP_SLOT; break;
    default: return;  // i386 is REL (its addends sit in the slots): not read
  }
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || sh.sh_entsize == 0) return;
  Elf_Scn* symbols = elf_getscn(elf, sh.sh_link);
  GElf_Shdr symbols_header;
  Elf_Data* symbol_data = symbols != nullptr && gelf_getshdr(symbols, &symbols_header) != nullptr
                              ? elf_getdata(symbols, nullptr)
                              : nullptr;
  const size_t count = sh.sh_size / sh.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Rela rela;
    if (gelf_getrela(data, static_cast<int>(i), &rela) == nullptr) break;
    const auto type = static_cast<unsigned>(GELF_R_TYPE(rela.r_info));
    GotSlot slot;
    slot.address = rela.r_offset;
    if (type == irelative) {
      slot.resolver = static_cast<uint64_t>(rela.r_addend);
    } else if (type == glob_dat || type == jump_slot) {
      GElf_Sym sym;
      if (symbol_data == nullptr || gelf_getsym(symbol_data, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym) == nullptr) continue;
      const char* name = elf_strptr(elf, symbols_header.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      slot.symbol = name;
    } else {
      continue;
    }
    out.push_back(std::move(slot));
  }
}

}  // namespace

struct ExceptionTablesOnce {
  std::once_flag once;
  std::optional<Result<ExceptionTables>> tables;
};

struct FileImage {
  std::string path;
  FileIdentity identity;  // of the file the headers and symbols were read from
  std::once_flag once;
  std::vector<uint8_t> bytes;
};

struct SymbolNames {
  std::once_flag once;
  std::vector<std::string> demangled;                       // per symbol, empty when not C++
  std::unordered_multimap<std::string, uint32_t> index;  // name, demangled name, short name
};

template <typename Wanted>
const Symbol* ElfFile::last_containing(uint64_t address, Wanted wanted, const std::vector<uint64_t>& reach) const {
  // What the scan in address order kept: the last wanted symbol that starts at or before the
  // address and contains it.
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& symbol) { return a < symbol.address; });
  for (auto i = static_cast<size_t>(it - symbols_.begin()); i-- > 0;) {
    if (reach[i] <= address) return nullptr;  // nothing up to here reaches the address
    const Symbol& symbol = symbols_[i];
    if (wanted(symbol) && address < symbol.address + std::max<uint64_t>(symbol.size, 1)) return &symbol;
  }
  return nullptr;
}

std::shared_ptr<ExceptionTablesOnce> ElfFile::no_exception_tables_yet() { return std::make_shared<ExceptionTablesOnce>(); }
std::shared_ptr<FileImage> ElfFile::no_image_yet() { return std::make_shared<FileImage>(); }
std::shared_ptr<SymbolNames> ElfFile::no_names_yet() { return std::make_shared<SymbolNames>(); }

const Result<ExceptionTables>& ElfFile::exception_tables() const {
  std::call_once(exception_tables_->once, [this] { exception_tables_->tables.emplace(ExceptionTables::index(*this)); });
  return *exception_tables_->tables;
}

Result<ElfFile> ElfFile::open(const std::string& path) {
  FileIdentity identity;
  auto opened = open_regular_file(path, identity);
  if (!opened) return opened.error();
  const Descriptor fd{*opened};
  const uint64_t file_size = identity.size;
  unsigned char magic[SELFMAG] = {};
  if (file_size < 4 || ::pread(fd.fd, magic, SELFMAG, 0) != SELFMAG || std::memcmp(magic, ELFMAG, SELFMAG) != 0)
    return make_error(fmt::format("{}: not an ELF file", path));
  elf_version(EV_CURRENT);

  ElfFile file;
  file.path_ = path;
  file.image_->path = path;
  file.image_->identity = identity;
  // ELF_C_READ: libelf reads the headers and, when asked, the sections it is asked for, with
  // pread (the symbol tables, the relocations, the dynamic section); the rest of the file
  // (code, data, a 30 MB .rodata) is read only if a probe needs it (image()).
  ElfHandle elf(elf_begin(fd.fd, ELF_C_READ, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return make_error(fmt::format("{}: not a valid ELF file: {}", path, elf_errmsg(-1)));

  GElf_Ehdr header;
  if (gelf_getehdr(elf.get(), &header) == nullptr)
    return make_error(fmt::format("{}: bad ELF header: {}", path, elf_errmsg(-1)));
  switch (header.e_machine) {
    case EM_X86_64: file.arch_ = insn::Arch::X86_64; break;
    case EM_386: file.arch_ = insn::Arch::I386; break;
    case EM_AARCH64: file.arch_ = insn::Arch::AArch64; break;
    default:
      return make_error(fmt::format("{}: unsupported ELF machine {} (xprobe handles x86-64, i386 and AArch64)", path,
                                    header.e_machine));
  }
  file.position_independent_ = header.e_type == ET_DYN;
  file.entry_ = header.e_entry;

  size_t phnum = 0;
  if (elf_getphdrnum(elf.get(), &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf.get(), static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
      // A segment whose bytes are not all in the file: cut short (a partial copy or download)
      // or corrupt. Its code cannot be checked, so the object is refused as a whole.
      if (ph.p_offset > file_size || ph.p_filesz > file_size - ph.p_offset) {
        return make_error(fmt::format("{}: truncated or corrupt ELF file: segment {} needs bytes up to offset {:#x}, "
                                      "the file has {:#x}",
                                      path, i, ph.p_offset + ph.p_filesz, file_size));
      }
      file.segments_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, (ph.p_flags & PF_X) != 0,
                                (ph.p_flags & PF_W) != 0});
    }
  }
  if (file.segments_.empty() && (header.e_type == ET_EXEC || header.e_type == ET_DYN)) {
    return make_error(fmt::format("{}: truncated or corrupt ELF file: no loadable segment", path));
  }

  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf.get(), &shstrndx) != 0) shstrndx = 0;
  std::vector<std::pair<Elf_Scn*, GElf_Shdr>> symbol_tables;
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn != nullptr; scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    const char* name = shstrndx != 0 ? elf_strptr(elf.get(), shstrndx, sh.sh_name) : nullptr;
    Section section;
    section.name = name != nullptr ? name : "";
    section.address = sh.sh_addr;
    section.file_offset = sh.sh_offset;
    section.size = sh.sh_size;
    section.executable = (sh.sh_flags & SHF_EXECINSTR) != 0 && (sh.sh_flags & SHF_ALLOC) != 0;
    section.has_file_bytes = sh.sh_type != SHT_NOBITS && sh.sh_offset <= file_size &&
                             sh.sh_size <= file_size - sh.sh_offset;
    if (sh.sh_flags & SHF_ALLOC) file.sections_.push_back(section);
    if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) symbol_tables.emplace_back(scn, sh);
    if (sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC)) read_got_slots(elf.get(), scn, sh, header.e_machine, file.got_slots_);
    if (sh.sh_type == SHT_DYNAMIC && sh.sh_entsize != 0) {
      if (Elf_Data* data = elf_getdata(scn, nullptr)) {
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
          GElf_Dyn dyn;
          if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag == DT_NULL) break;
          if (dyn.d_tag != DT_SONAME) continue;
          if (const char* soname = elf_strptr(elf.get(), sh.sh_link, dyn.d_un.d_val)) file.soname_ = soname;
        }
      }
    }
  }
  // Prefer .symtab; a stripped object has only .dynsym. Both are read so that nothing is lost
  // when .symtab exists but lacks an exported alias.
  std::stable_sort(symbol_tables.begin(), symbol_tables.end(),
                   [](const auto& a, const auto& b) { return a.second.sh_type == SHT_SYMTAB && b.second.sh_type != SHT_SYMTAB; });
  for (auto& [scn, sh] : symbol_tables) {
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || sh.sh_entsize == 0) continue;
    const size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
      const int type = GELF_ST_TYPE(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0) continue;
      const char* name = elf_strptr(elf.get(), sh.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      Symbol symbol;
      symbol.name = name;
      symbol.address = sym.st_value;
      symbol.size = sym.st_size;
      symbol.kind = (type == STT_FUNC || type == STT_GNU_IFUNC) ? SymbolKind::Function
                    : (type == STT_OBJECT || type == STT_TLS) ? SymbolKind::Object
                                                              : SymbolKind::Other;
      if (type == STT_TLS || type == STT_SECTION || type == STT_FILE) continue;
      const int bind = GELF_ST_BIND(sym.st_info);
      symbol.global = bind == STB_GLOBAL || bind == STB_WEAK;
      symbol.from_dynsym = sh.sh_type == SHT_DYNSYM;
      symbol.ifunc = type == STT_GNU_IFUNC;
      file.symbols_.push_back(std::move(symbol));
    }
  }
  std::stable_sort(file.symbols_.begin(), file.symbols_.end(), [](const Symbol& a, const Symbol& b) {
    return a.address != b.address ? a.address < b.address : a.name < b.name;
  });
  // The same symbol from .symtab and .dynsym: keep the first (the .symtab one sorts equal and came first).
  file.symbols_.erase(std::unique(file.symbols_.begin(), file.symbols_.end(),
                                  [](const Symbol& a, const Symbol& b) { return a.address == b.address && a.name == b.name; }),
                      file.symbols_.end());
  file.function_reach_.reserve(file.symbols_.size());
  file.symbol_reach_.reserve(file.symbols_.size());
  uint64_t function_reach = 0, symbol_reach = 0;
  for (const Symbol& symbol : file.symbols_) {
    const uint64_t end = symbol.address + std::max<uint64_t>(symbol.size, 1);  // wraps as the scans' test did
    if (symbol.kind == SymbolKind::Function) function_reach = std::max(function_reach, end);
    if (symbol.kind != SymbolKind::Other) symbol_reach = std::max(symbol_reach, end);
    file.function_reach_.push_back(function_reach);
    file.symbol_reach_.push_back(symbol_reach);
  }
  return file;
}

std::span<const uint8_t> ElfFile::image() const {
  FileImage& image = *image_;
  std::call_once(image.once, [&image] {
    // Another file at the path by now (replaced, rebuilt, truncated) is not the one whose
    // symbols were read: no bytes rather than another file's.
    if (auto bytes = read_unchanged_regular_file(image.path, image.identity)) image.bytes = std::move(*bytes);
  });
  return image.bytes;
}

const SymbolNames& ElfFile::names() const {
  SymbolNames& names = *names_;
  std::call_once(names.once, [this, &names] {
    names.demangled.reserve(symbols_.size());
    for (uint32_t i = 0; i < symbols_.size(); ++i) {
      names.demangled.push_back(demangle(symbols_[i].name));
      const std::string& demangled = names.demangled.back();
      names.index.emplace(symbols_[i].name, i);
      if (demangled.empty()) continue;
      names.index.emplace(demangled, i);
      const std::string_view short_name = without_parameters(demangled);
      if (short_name.size() != demangled.size()) names.index.emplace(std::string(short_name), i);
    }
  });
  return names;
}

std::span<const uint8_t> ElfFile::section_bytes(const Section& section) const {
  if (!section.has_file_bytes) return {};
  const std::span<const uint8_t> whole = image();
  if (section.file_offset > whole.size() || section.size > whole.size() - section.file_offset) return {};
  return whole.subspan(section.file_offset, section.size);
}

std::span<const uint8_t> ElfFile::function_bytes(const Symbol& function) const {
  if (function.size != 0) {
    if (auto bytes = bytes_at(function.address, function.size)) return *bytes;
  }
  for (const Section& section : sections_) {
    if (!section.has_file_bytes || function.address < section.address ||
        function.address - section.address >= section.size)
      continue;
    uint64_t end = section.address + section.size;
    for (const Symbol& other : symbols_)
      if (other.kind == SymbolKind::Function && other.address > function.address && other.address < end)
        end = other.address;
    return section_bytes(section).subspan(function.address - section.address, end - function.address);
  }
  return {};
}

std::optional<std::span<const uint8_t>> ElfFile::bytes_at(uint64_t address, uint64_t size) const {
  for (const Section& section : sections_) {
    if (!section.has_file_bytes || address < section.address) continue;
    const uint64_t offset = address - section.address;
    if (offset > section.size || size > section.size - offset) continue;
    return section_bytes(section).subspan(offset, size);
  }
  return std::nullopt;
}

std::vector<const Symbol*> ElfFile::find_symbols(std::string_view name) const {
  const SymbolNames& all = names();
  std::vector<const Symbol*> matches;
  if (!has_glob_characters(name)) {
    // The name, the demangled name and the short name of one symbol may all be `name`.
    std::vector<uint32_t> found;
    auto [begin, end] = all.index.equal_range(std::string(name));
    for (auto it = begin; it != end; ++it) found.push_back(it->second);
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (uint32_t i : found)
      if (symbols_[i].kind != SymbolKind::Other) matches.push_back(&symbols_[i]);
    return matches;
  }
  for (uint32_t i = 0; i < symbols_.size(); ++i) {
    const Symbol& symbol = symbols_[i];
    if (symbol.kind == SymbolKind::Other) continue;
    const std::string& demangled = all.demangled[i];
    const bool hit = glob_match(name, symbol.name) ||
                     (!demangled.empty() && (glob_match(name, demangled) || glob_match(name, without_parameters(demangled))));
    if (hit) matches.push_back(&symbol);
  }
  return matches;
}

std::vector<const Symbol*> ElfFile::symbols_named(std::string_view name) const {
  std::vector<const Symbol*> matches;
  for (const Symbol& symbol : symbols_)
    if (symbol.kind != SymbolKind::Other && symbol.name == name) matches.push_back(&symbol);
  return matches;
}

const Symbol* ElfFile::function_containing(uint64_t address) const {
  return last_containing(address, [](const Symbol& symbol) { return symbol.kind == SymbolKind::Function; }, function_reach_);
}

std::vector<const Symbol*> ElfFile::symbols_starting_in(uint64_t begin, uint64_t end) const {
  std::vector<const Symbol*> found;
  auto it = std::lower_bound(symbols_.begin(), symbols_.end(), begin,
                             [](const Symbol& symbol, uint64_t address) { return symbol.address < address; });
  for (; it != symbols_.end() && it->address < end; ++it)
    if (it->kind != SymbolKind::Other) found.push_back(&*it);
  return found;
}

const Symbol* ElfFile::symbol_containing(uint64_t address) const {
  return last_containing(address, [](const Symbol& symbol) { return symbol.kind != SymbolKind::Other; }, symbol_reach_);
}

std::optional<uint64_t> ElfFile::file_offset_to_address(uint64_t offset) const {
  for (const LoadSegment& segment : segments_)
    if (offset >= segment.file_offset && offset - segment.file_offset < segment.file_size)
      return segment.vaddr + (offset - segment.file_offset);
  return std::nullopt;
}

std::optional<uint64_t> ElfFile::address_to_file_offset(uint64_t address) const {
  for (const LoadSegment& segment : segments_)
    if (address >= segment.vaddr && address - segment.vaddr < segment.file_size)
      return segment.file_offset + (address - segment.vaddr);
  return std::nullopt;
}

}  // namespace xprobe::elf
