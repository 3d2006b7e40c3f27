#pragma once
// Runtime address -> "symbol+0xoff/0xsize", as the kernel prints the `symbol` fetch type (%pS).
#include <cstdint>
#include <optional>
#include <string>

#include "probe/resolve/module_map.h"

namespace xprobe::probe {

class Symbolizer {
 public:
  explicit Symbolizer(const ModuleMap& modules) : modules_(&modules) {}
  // nullopt when no symbol covers the address (the kernel then prints the bare address).
  std::optional<std::string> symbolize(uint64_t address) const;

 private:
  const ModuleMap* modules_;
};

}  // namespace xprobe::probe
