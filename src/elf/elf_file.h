#pragma once
// An ELF object as xprobe needs it: architecture, sections with their bytes, function and
// data symbols (.symtab, else .dynsym for stripped objects), and the mapping between file
// offsets and virtual addresses. The file is untrusted input: every offset is checked.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "insn/arch.h"
#include "support/regular_file.h"
#include "support/result.h"

namespace xprobe::elf {

struct Section {
  std::string name;
  uint64_t address = 0;
  uint64_t file_offset = 0;
  uint64_t size = 0;
  bool executable = false;
  bool has_file_bytes = false;  // false for SHT_NOBITS (.bss)
};

enum class SymbolKind : uint8_t { Function, Object, Other };

struct Symbol {
  std::string name;       // as stored (mangled for C++)
  uint64_t address = 0;   // st_value: link-time virtual address
  uint64_t size = 0;
  SymbolKind kind = SymbolKind::Other;
  bool global = false;    // STB_GLOBAL or STB_WEAK
  bool from_dynsym = false;
  // STT_GNU_IFUNC: `address` is the resolver, which the dynamic linker runs at relocation to
  // choose the implementation every call then reaches (see got_slots()).
  bool ifunc = false;
};

// A GOT slot the dynamic linker fills with a function's address while it relocates the
// object: after that, reading it in the process tells which function that is.
struct GotSlot {
  uint64_t address = 0;   // link-time address of the slot
  uint64_t resolver = 0;  // IRELATIVE: the IFUNC resolver whose result is stored (link address)
  std::string symbol;     // GLOB_DAT / JUMP_SLOT: the symbol whose address is stored
};

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t file_offset = 0;
  uint64_t file_size = 0;
  uint64_t mem_size = 0;
  bool executable = false;
  bool writable = false;
};

class ExceptionTables;
struct ExceptionTablesOnce;
struct FileImage;
struct SymbolNames;

class ElfFile {
 public:
  static Result<ElfFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  insn::Arch arch() const { return arch_; }
  bool position_independent() const { return position_independent_; }  // ET_DYN: loaded at a bias
  const std::string& soname() const { return soname_; }  // DT_SONAME, empty when there is none
  uint64_t entry() const { return entry_; }  // e_entry, link-time
  const std::vector<Section>& sections() const { return sections_; }
  const std::vector<Symbol>& symbols() const { return symbols_; }
  const std::vector<LoadSegment>& load_segments() const { return segments_; }
  // IRELATIVE, GLOB_DAT and JUMP_SLOT relocations of .rela.dyn/.rela.plt (RELA objects:
  // x86-64, AArch64), in file order.
  const std::vector<GotSlot>& got_slots() const { return got_slots_; }

  // The file's bytes are read on first use (most objects a process maps are never probed:
  // reading all of them made an attach read ~80 MB), from the same file: if the path names
  // another or a modified file by then, there are no bytes (every span below is empty).
  // Bytes of the file at a virtual address range, if they lie inside one section with file bytes.
  std::optional<std::span<const uint8_t>> bytes_at(uint64_t address, uint64_t size) const;
  std::span<const uint8_t> section_bytes(const Section& section) const;
  // A function's bytes. Without st_size (hand-written assembly) it extends to the next
  // function symbol or the end of its section.
  std::span<const uint8_t> function_bytes(const Symbol& function) const;

  // Functions and objects whose name (or demangled name, or demangled name without its
  // parameter list) equals `name`, or matches it when it holds glob characters (* ? [), in
  // address order. The names are demangled and indexed on the first call.
  std::vector<const Symbol*> find_symbols(std::string_view name) const;
  // Functions and objects whose name as stored is exactly `name` (no demangling, no globs).
  std::vector<const Symbol*> symbols_named(std::string_view name) const;
  const Symbol* function_containing(uint64_t address) const;
  // Functions and objects whose start lies in [begin, end), in address order.
  std::vector<const Symbol*> symbols_starting_in(uint64_t begin, uint64_t end) const;
  const Symbol* symbol_containing(uint64_t address) const;  // function or object

  std::optional<uint64_t> file_offset_to_address(uint64_t offset) const;
  std::optional<uint64_t> address_to_file_offset(uint64_t address) const;

  // Its .eh_frame indexed on first use and kept (every probe of the object asks it; indexing
  // python3.11's 400 KB .eh_frame once per definition made 3,000 probes take minutes).
  const Result<ExceptionTables>& exception_tables() const;

 private:
  std::string path_;
  insn::Arch arch_ = insn::Arch::X86_64;
  bool position_independent_ = false;
  std::string soname_;
  uint64_t entry_ = 0;
  std::span<const uint8_t> image() const;  // the whole file, read on first use
  template <typename Wanted>
  const Symbol* last_containing(uint64_t address, Wanted wanted, const std::vector<uint64_t>& reach) const;
  const SymbolNames& names() const;
  static std::shared_ptr<FileImage> no_image_yet();
  static std::shared_ptr<SymbolNames> no_names_yet();
  std::shared_ptr<FileImage> image_ = no_image_yet();  // copies share it: the same file
  std::vector<Section> sections_;
  std::vector<Symbol> symbols_;         // sorted by address
  // For each symbol, the furthest end (address + size, at least 1) of the functions (and of
  // the functions and objects) up to it: a containing symbol is searched backwards from the
  // address only as far as something before can still reach it.
  std::vector<uint64_t> function_reach_;
  std::vector<uint64_t> symbol_reach_;
  std::shared_ptr<SymbolNames> names_ = no_names_yet();  // copies share it: the same symbols
  std::vector<LoadSegment> segments_;
  std::vector<GotSlot> got_slots_;
  static std::shared_ptr<ExceptionTablesOnce> no_exception_tables_yet();
  std::shared_ptr<ExceptionTablesOnce> exception_tables_ = no_exception_tables_yet();  // copies share it: same bytes
};

}  // namespace xprobe::elf
