// How long source-level resolution takes on real objects:
//   source_resolution functions OBJECT  the debug information read and indexed, then every
//                                       out-of-line function resolved as `p OBJECT:FUNC $params`
//                                       (its address, the prologue rule, its parameters compiled)
//   source_resolution markers OBJECT    every SDT marker resolved as `p OBJECT:%sdt_*:*`
//   source_resolution expand OBJECT DEF the kernel-syntax definitions DEF becomes
// Prints one line per measurement: what, count, total milliseconds, microseconds each.
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <set>
#include <string>

#include "source/source_definition.h"

namespace {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int functions(const std::string& object_path) {
  xprobe::source::SourceObjects objects;
  const auto start = std::chrono::steady_clock::now();
  auto index = objects.get(object_path).functions();
  if (!index) {
    fmt::print(stderr, "{}\n", index.error().message);
    return 1;
  }
  const double index_ms = milliseconds_since(start);
  std::set<std::string> names;
  for (const auto& instance : (*index)->instances())
    if (!instance.inlined && instance.name.find_first_of("*?[ <>,") == std::string::npos) names.insert(instance.name);
  fmt::print("index {}: {} compilation units, {} function instances, {:.1f} ms\n", object_path, (*index)->compilation_units(),
             (*index)->instances().size(), index_ms);
  size_t resolved = 0, refused = 0, probes = 0;
  const auto resolve_start = std::chrono::steady_clock::now();
  for (const std::string& name : names) {
    auto expansion = xprobe::source::expand_source_definition(fmt::format("p {}:{} $params", object_path, name), {object_path}, objects);
    if (expansion) {
      ++resolved;
      probes += expansion->definitions.size();
    } else {
      ++refused;
    }
  }
  const double resolve_ms = milliseconds_since(resolve_start);
  fmt::print("resolve every function {}: {} names ({} resolved to {} probes, {} refused), {:.1f} ms, {:.1f} us each\n",
             object_path, names.size(), resolved, probes, refused, resolve_ms, names.empty() ? 0.0 : 1000.0 * resolve_ms / static_cast<double>(names.size()));
  return 0;
}

int markers(const std::string& object_path) {
  xprobe::source::SourceObjects objects;
  const auto start = std::chrono::steady_clock::now();
  auto expansion = xprobe::source::expand_source_definition(fmt::format("p {}:%sdt_*:*", object_path), {object_path}, objects);
  const double ms = milliseconds_since(start);
  if (!expansion) {
    fmt::print(stderr, "{}\n", expansion.error().message);
    return 1;
  }
  fmt::print("resolve every SDT marker {}: {} markers, {:.2f} ms\n", object_path, expansion->definitions.size(), ms);
  return 0;
}

// The kernel-syntax definitions a source-level one becomes.
int expand(const std::string& object_path, const std::string& definition) {
  xprobe::source::SourceObjects objects;
  auto expansion = xprobe::source::expand_source_definition(definition, {object_path}, objects);
  if (!expansion) {
    fmt::print(stderr, "{}\n", expansion.error().message);
    return 1;
  }
  for (const std::string& text : expansion->definitions) fmt::print("{}\n", text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "expand") return expand(argv[2], argv[3]);
  if (argc != 3) {
    std::fprintf(stderr, "usage: source_resolution functions|markers OBJECT | expand OBJECT DEFINITION\n");
    return 2;
  }
  const std::string what = argv[1];
  if (what == "functions") return functions(argv[2]);
  if (what == "markers") return markers(argv[2]);
  std::fprintf(stderr, "usage: source_resolution functions|markers OBJECT\n");
  return 2;
}
