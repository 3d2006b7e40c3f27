#include "open_one_elf.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "elf/elf_file.h"
#include "elf/exception_tables.h"

namespace xprobe::fuzz {
namespace {

[[noreturn]] void invariant_broken(const char* what) {
  std::fprintf(stderr, "open_one_elf: invariant broken: %s\n", what);
  std::abort();
}

// ElfFile::open takes a path: an anonymous memory file keeps the fuzzer off the disk.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("xprobe-elf-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) invariant_broken("memfd_create failed");
    size_t written = 0;
    while (written < size) {
      const ssize_t n = write(fd_, data + written, size - written);
      if (n <= 0) invariant_broken("write to memfd failed");
      written += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

size_t touch(std::span<const uint8_t> bytes) {
  size_t sum = 0;
  for (uint8_t b : bytes) sum += b;
  return sum + bytes.size();
}

}  // namespace

ElfOpenOutcome open_one_elf(const uint8_t* data, size_t size) {
  MemoryFile file(data, size);
  ElfOpenOutcome outcome;
  auto elf = elf::ElfFile::open(file.path());
  if (!elf) {
    outcome.error = elf.error().message;
    if (outcome.error.empty()) invariant_broken("empty error message");
    if (outcome.error.find('\n') != std::string::npos) invariant_broken("error message spans lines");
    return outcome;
  }
  outcome.opened = true;
  outcome.symbols = elf->symbols().size();
  for (const elf::Section& section : elf->sections()) {
    const auto bytes = elf->section_bytes(section);
    if (bytes.size() > size) invariant_broken("section bytes larger than the file");
    outcome.bytes_touched += touch(bytes);
    if (auto at = elf->bytes_at(section.address, section.size > 16 ? 16 : section.size)) outcome.bytes_touched += touch(*at);
  }
  size_t functions = 0;
  for (const elf::Symbol& symbol : elf->symbols()) {
    if (symbol.kind == elf::SymbolKind::Function && ++functions <= 4096) {
      const auto bytes = elf->function_bytes(symbol);
      if (bytes.size() > size) invariant_broken("function bytes larger than the file");
      outcome.bytes_touched += touch(bytes);
    }
    if (elf->function_containing(symbol.address) == nullptr && symbol.kind == elf::SymbolKind::Function &&
        symbol.address + (symbol.size == 0 ? 1 : symbol.size) > symbol.address)  // a wrapped end contains nothing
      invariant_broken("a function symbol is not found at its own address");
    (void)elf->symbol_containing(symbol.address);
    if (auto offset = elf->address_to_file_offset(symbol.address)) (void)elf->file_offset_to_address(*offset);
  }
  for (std::string_view pattern : {"*", "main", "_start", "[a-", "*?*[!x]"}) (void)elf->find_symbols(pattern);
  for (const elf::LoadSegment& segment : elf->load_segments()) {
    (void)elf->file_offset_to_address(segment.file_offset);
    (void)elf->address_to_file_offset(segment.vaddr + segment.file_size);
  }
  // The exception tables (C++ landing pads) the jump engine reads for return sites.
  if (auto tables = elf::ExceptionTables::index(*elf)) {
    for (const elf::FrameDescription& frame : tables->frames()) {
      if (frame.pc_end < frame.pc_begin) invariant_broken("an FDE ends before it begins");
      (void)tables->landing_pads_in(frame.pc_begin, frame.pc_begin + 32);
    }
  }
  return outcome;
}

}  // namespace xprobe::fuzz
