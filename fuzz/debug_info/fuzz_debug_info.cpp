// libFuzzer target for the reading of debug information (src/source): an arbitrary file as
// an object with DWARF and SDT notes. Every path must end in a value or an error, never a
// crash: the index is built, definitions are expanded at every kind of place, the listings
// are made.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "source/listings.h"
#include "source/source_definition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("xprobe-dwarf-fuzz", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (size_t written = 0; written < size;) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) std::abort();
    written += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  xprobe::source::SourceObjects objects;
  xprobe::source::SourceObject& object = objects.get(path);
  if (auto functions = object.functions(); functions) {
    // A few of its own functions, by name, line and variables.
    size_t tried = 0;
    for (const auto& instance : (*functions)->instances()) {
      if (tried++ == 4) break;
      for (const char* form : {"p {}:{} $vars", "p {}:{}:1", "p {}:{}%return"}) {
        std::string definition = form;
        definition.replace(definition.find("{}"), 2, path);
        definition.replace(definition.find("{}"), 2, instance.name);
        (void)xprobe::source::expand_source_definition(definition, {path}, objects);
      }
      (void)xprobe::source::list_lines(object, instance.name);
      if (!instance.decl_file.empty())
        (void)xprobe::source::expand_source_definition("p " + path + ":" + instance.decl_file + ":" + std::to_string(instance.decl_line + 1),
                                                       {path}, objects);
    }
  }
  (void)xprobe::source::expand_source_definition("p " + path + ":%sdt_*:* $arg1 +0($arg2):string", {path}, objects);
  (void)xprobe::source::list_functions(object, "*");
  (void)xprobe::source::list_markers(object, "*");
  close(fd);
  return 0;
}
